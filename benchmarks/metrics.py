"""Retrieval, abstention and context metrics. Pure functions, no I/O.

Granularity:

* **turn level**: a retrieved memory is a hit when its id is a gold evidence turn;
* **session level**: a retrieved memory is a hit when its session (``session_id`` of the hit) is
  the session of a gold evidence turn (taken from the dataset).

Per question, over the ranked list the system returned (``k`` = 10 by default):

* ``R@k`` — binary: 1 if any gold item is in the top k;
* ``MRR`` — 1 / rank of the first gold hit in the returned list, 0 if none;
* ``FR@k`` — full recall: the fraction of the *distinct* gold items found in the top k. Reported
  over the multi-evidence questions (``FR@k``, the case it exists for) and over all (``FR@k.all``).

Questions without gold evidence are not scored for retrieval (the caller counts them).
Abstention treats unanswerable questions as the positive class: precision = share of abstentions
that were on unanswerable questions, recall = share of unanswerable questions abstained on.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_KS: tuple[int, ...] = (1, 5, 10)


def hit_at_k(ranked: Sequence[Hashable], gold: Iterable[Hashable], k: int) -> bool:
    g = set(gold)
    return any(x in g for x in ranked[:k])


def reciprocal_rank(ranked: Sequence[Hashable], gold: Iterable[Hashable]) -> float:
    g = set(gold)
    for i, x in enumerate(ranked, 1):
        if x in g:
            return 1.0 / i
    return 0.0


def full_recall_at_k(ranked: Sequence[Hashable], gold: Iterable[Hashable], k: int) -> float:
    g = set(gold)
    if not g:
        raise ValueError("full recall needs at least one gold item")
    return len(g.intersection(ranked[:k])) / len(g)


@dataclass(frozen=True)
class Judged:
    """One question's outcome at one granularity: the ranked unit ids and the gold ids."""

    category: str
    ranked: tuple[Hashable, ...]
    gold: frozenset[Hashable]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def retrieval_metrics(items: Sequence[Judged], ks: Sequence[int] = DEFAULT_KS) -> dict[str, Any]:
    """R@k, MRR, FR@k (multi-evidence questions) and FR@k.all over ``items`` (all with gold)."""
    kmax = max(ks)
    scored = [j for j in items if j.gold]
    multi = [j for j in scored if len(j.gold) > 1]
    out: dict[str, Any] = {"n": len(scored), "n_multi": len(multi)}
    for k in ks:
        out[f"R@{k}"] = _mean([float(hit_at_k(j.ranked, j.gold, k)) for j in scored])
    out["MRR"] = _mean([reciprocal_rank(j.ranked, j.gold) for j in scored])
    out[f"FR@{kmax}"] = _mean([full_recall_at_k(j.ranked, j.gold, kmax) for j in multi])
    out[f"FR@{kmax}.all"] = _mean([full_recall_at_k(j.ranked, j.gold, kmax) for j in scored])
    return out


def by_category(
    items: Sequence[Judged], ks: Sequence[int] = DEFAULT_KS
) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[Judged]] = defaultdict(list)
    for j in items:
        groups[j.category].append(j)
    return {c: retrieval_metrics(groups[c], ks) for c in sorted(groups)}


def abstention_metrics(outcomes: Iterable[tuple[bool, bool]]) -> dict[str, Any]:
    """``outcomes``: (unanswerable, abstained) per question."""
    tp = fp = fn = tn = 0
    for unanswerable, abstained in outcomes:
        if unanswerable and abstained:
            tp += 1
        elif abstained:
            fp += 1
        elif unanswerable:
            fn += 1
        else:
            tn += 1
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = (
        2 * precision * recall / (precision + recall)
        if precision is not None and recall is not None and precision + recall > 0
        else (0.0 if precision is not None and recall is not None else None)
    )
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "abstain_rate_answerable": fp / (fp + tn) if fp + tn else None,
        "abstain_rate_unanswerable": recall,
    }


def context_recall(items: Iterable[tuple[frozenset[str], Iterable[str]]]) -> dict[str, Any]:
    """Share of questions whose gold evidence turns appear in the assembled context.

    ``items``: (gold turn ids, memory ids included in the context) per question with gold.
    ``any``: at least one gold turn included (the headline figure); ``all``: every gold turn
    included; ``frac``: mean fraction of gold turns included.
    """
    anys: list[float] = []
    alls: list[float] = []
    fracs: list[float] = []
    for gold, included in items:
        if not gold:
            continue
        inc = set(included)
        found = len(gold & inc)
        anys.append(float(found > 0))
        alls.append(float(found == len(gold)))
        fracs.append(found / len(gold))
    return {"n": len(anys), "any": _mean(anys), "all": _mean(alls), "frac": _mean(fracs)}


def percentile(values: Sequence[float], p: float) -> float | None:
    """Linear-interpolated percentile (p in 0..100), None for no values."""
    if not values:
        return None
    xs = sorted(values)
    if len(xs) == 1:
        return float(xs[0])
    pos = (len(xs) - 1) * p / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return float(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo))


def latency_summary(values_ms: Sequence[float]) -> dict[str, Any]:
    return {
        "n": len(values_ms),
        "p50_ms": percentile(values_ms, 50),
        "p95_ms": percentile(values_ms, 95),
        "mean_ms": _mean(list(values_ms)),
        "max_ms": max(values_ms) if values_ms else None,
    }
