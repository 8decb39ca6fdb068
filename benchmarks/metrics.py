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
Context precision (:func:`context_precision`) is the share of a context's text that comes from
gold turns or from their sessions, over the whole context and over its facts section.
Abstention treats unanswerable questions as the positive class: precision = share of abstentions
that were on unanswerable questions, recall = share of unanswerable questions abstained on.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
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


FACTS_SECTION = "facts"


@dataclass(frozen=True)
class Precise:
    """One context to score for precision: its spans (:class:`benchmarks.sut.ContextSpan`:
    ``section``, ``chars``, ``memory_id``, ``record``), the question's gold turns and
    sessions, and the session of every turn the spans may name."""

    spans: Sequence[Any]
    gold_turns: frozenset[str]
    gold_sessions: frozenset[str]
    session_of: Mapping[str, str]


def _shares(spans: Sequence[Any], p: Precise) -> tuple[float, float, float] | None:
    """(gold-turn, gold-session, unattributed-record) shares of the characters of ``spans``;
    None for no characters."""
    total = sum(s.chars for s in spans)
    if total <= 0:
        return None
    turn = session = loose = 0
    for s in spans:
        if s.memory_id is None:
            loose += s.chars if s.record else 0
            continue
        if s.memory_id in p.gold_turns:
            turn += s.chars
        if p.session_of.get(s.memory_id) in p.gold_sessions:
            session += s.chars
    return turn / total, session / total, loose / total


def context_precision(items: Iterable[Precise]) -> dict[str, Any]:
    """Context precision: the share of a context's characters (tokens are chars/3, so the
    same share) that come from gold evidence turns (``turn``) and from their sessions
    (``session``), averaged over the contexts with gold and any text; ``facts``: the same
    over the facts section alone (contexts that have one, ``n``), with ``share`` the facts
    section's part of the whole context (over every context). ``unattributed``: the share
    of record characters whose memory could not be told (never counted as gold)."""
    turns: list[float] = []
    sessions: list[float] = []
    loose: list[float] = []
    f_turns: list[float] = []
    f_sessions: list[float] = []
    f_share: list[float] = []
    for p in items:
        if not p.gold_turns:
            continue
        whole = _shares(p.spans, p)
        if whole is None:
            continue
        turns.append(whole[0])
        sessions.append(whole[1])
        loose.append(whole[2])
        facts = [s for s in p.spans if s.section == FACTS_SECTION]
        total = sum(s.chars for s in p.spans)
        f_share.append(sum(s.chars for s in facts) / total)
        part = _shares(facts, p)
        if part is not None:
            f_turns.append(part[0])
            f_sessions.append(part[1])
    return {
        "n": len(turns),
        "turn": _mean(turns),
        "session": _mean(sessions),
        "unattributed": _mean(loose),
        "facts": {
            "n": len(f_turns),
            "turn": _mean(f_turns),
            "session": _mean(f_sessions),
            "share": _mean(f_share),
        },
    }


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


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test of ``wins`` against ``losses`` (ties left out): the
    probability, under a fair coin, of a split at least this uneven. 1.0 without pairs."""
    n = wins + losses
    if wins < 0 or losses < 0:
        raise ValueError("counts must be non-negative")
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1))
    return min(1.0, 2 * tail / 2**n)
