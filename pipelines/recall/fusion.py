"""Rank fusion, temporal boosting and reranker blending (read path, stages 3–4).

* :func:`weighted_rrf` — weighted reciprocal rank fusion (Cormack et al., 2009, with
  per-signal weights as in Bruch et al., 2023): ``score(d) = Σ_s w_s / (k + rank_s(d))``
  with 1-based ranks. Only ranks matter, so signals on incomparable scales (cosine, BM25,
  heat, recency) fuse without calibration.
* :func:`signal_reliability` — a per-query factor on each signal's weight from how far its
  best score stands above its other top scores (:func:`top_peak`): a flat signal abstains.
* :func:`session_resolution` — how finely a ranking's head splits into sessions, against
  the results asked for: the share of a session-level lift that can still tell turns apart.
* :func:`temporal_boost` — multiply the score of candidates inside a query's time window
  by a constant factor (a conditional, multiplicative re-weighting).
* :func:`blend_rerank` — min-max normalise the fused score and the cross-encoder score
  over the candidate list and mix them: ``(1 − α)·fused + α·rerank``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from pipelines.recall.config import DEFAULT_RECALL_CONFIG


@dataclass(frozen=True, slots=True)
class FusedItem:
    """One fused candidate.

    ``ranks`` holds the 1-based rank of the item in every signal that returned it (also
    for zero-weight signals); ``contributions`` holds ``w_s / (k + rank_s)`` for the same
    signals, so ``score == math.fsum(contributions.values())``.
    """

    id: str
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    contributions: dict[str, float] = field(default_factory=dict)

    @property
    def best_rank(self) -> int:
        """The best (smallest) rank over all signals that returned the item."""
        return min(self.ranks.values())


@dataclass(frozen=True, slots=True)
class BlendedItem:
    """A candidate after reranker blending; ``*_norm`` are the min-max normalised inputs."""

    id: str
    score: float
    fused_norm: float
    rerank_norm: float
    reranked: bool


def weighted_rrf(
    rankings: Mapping[str, Sequence[str]],
    weights: Mapping[str, float],
    k: int = DEFAULT_RECALL_CONFIG.fusion.rrf_k,
) -> list[FusedItem]:
    """Fuse per-signal rankings with weighted reciprocal rank fusion.

    ``rankings[signal]`` lists ids best first; a repeated id keeps its first (best)
    position. A signal missing from ``weights`` has weight 0. Zero-weight signals add
    nothing to scores but their ranks are still reported for items that some positive
    signal returned; items returned *only* by zero-weight signals are left out (they have
    no evidence for this query). Scores are summed with :func:`math.fsum`, so they do not
    depend on signal order. Ties are broken by best rank over all signals, then by id.

    Raises:
        ValueError: if ``k`` is negative or a weight is negative or not finite.
    """
    if k < 0:
        raise ValueError("k must be >= 0")
    for signal, weight in weights.items():
        if not math.isfinite(weight) or weight < 0.0:
            raise ValueError(f"weight of {signal!r} must be finite and >= 0, got {weight}")

    ranks: dict[str, dict[str, int]] = {}
    for signal in sorted(rankings):
        for position, item_id in enumerate(rankings[signal], start=1):
            item_ranks = ranks.setdefault(item_id, {})
            item_ranks.setdefault(signal, position)

    fused: list[FusedItem] = []
    for item_id, item_ranks in ranks.items():
        contributions = {
            signal: weights.get(signal, 0.0) / (k + rank) for signal, rank in item_ranks.items()
        }
        if any(weights.get(signal, 0.0) > 0.0 for signal in item_ranks):
            score = math.fsum(contributions.values())
            fused.append(FusedItem(item_id, score, dict(item_ranks), contributions))
    fused.sort(key=lambda item: (-item.score, item.best_rank, item.id))
    return fused


def top_peak(scores: Sequence[float], n: int) -> float | None:
    """How far the best of ``scores`` stands above the rest of the best ``n``, in standard
    deviations of those ``n`` (population): ``(x₁ − mean(x₂..xₙ)) / std(x₁..xₙ)``. Scale
    and shift free, so cosine, BM25 and counts compare. 0 when the best ``n`` are all equal
    (the ranking among them is arbitrary); None with fewer than three scores."""
    top = sorted(scores, reverse=True)[:n]
    if len(top) < 3:
        return None
    mean = math.fsum(top) / len(top)
    spread = math.sqrt(math.fsum((x - mean) ** 2 for x in top) / len(top))
    if spread <= 0.0:
        return 0.0
    rest = math.fsum(top[1:]) / (len(top) - 1)
    return (top[0] - rest) / spread


def signal_reliability(scores: Mapping[str, Sequence[float]], n: int) -> dict[str, float]:
    """A per-query factor for each signal's fusion weight: its :func:`top_peak` over the
    mean peak of the signals that have one, so a signal whose best matches stand out gets
    more say and one whose scores are flat (long texts that all share the query's common
    words, a graph signal where every match ties) gets less, down to none. The factors
    average 1 over the signals with a peak; a signal with too few scores keeps 1."""
    peaks = {name: top_peak(values, n) for name, values in scores.items()}
    known = [p for p in peaks.values() if p is not None]
    mean = math.fsum(known) / len(known) if known else 0.0
    if mean <= 0.0:
        return {name: 1.0 for name in scores}
    return {name: 1.0 if p is None else p / mean for name, p in peaks.items()}


def session_resolution(sessions: Sequence[str | None], k: int) -> float:
    """How finely the sessions of ``sessions`` (a ranking's head, one entry per candidate)
    split it, against the ``k`` results asked for: ``min(1, n_eff / k)``, ``n_eff = 1 / Σ
    pᵢ²`` the effective number of sessions (pᵢ: a session's share of the head; a candidate
    without a session is a session of its own). A head spread over fewer sessions than the
    results must hold several of each, so a session-level lift or a per-session novelty
    charge says less about which turns to take; scaled by this, it fades to nothing as one
    session takes the whole head."""
    if k < 1:
        raise ValueError("k must be >= 1")
    if not sessions:
        return 1.0
    counts: dict[str, int] = {}
    for n, session in enumerate(sessions):
        key = f"s:{session}" if session is not None else f"c:{n}"
        counts[key] = counts.get(key, 0) + 1
    total = len(sessions)
    effective = 1.0 / math.fsum((c / total) ** 2 for c in counts.values())
    return min(1.0, effective / k)


def temporal_boost(
    scored: Sequence[tuple[str, float]],
    in_window: Collection[str],
    factor: float = DEFAULT_RECALL_CONFIG.fusion.temporal_boost_factor,
) -> list[tuple[str, float]]:
    """Multiply the score of every id in ``in_window`` by ``factor`` and re-sort.

    Used when the query carries a time expression: candidates whose event time falls in
    the resolved window are boosted rather than hard-filtered, so a wrongly resolved
    window cannot empty the result. The sort is stable, so equal scores keep their input
    order.
    """
    if not math.isfinite(factor) or factor < 0.0:
        raise ValueError("factor must be finite and >= 0")
    boosted = [
        (item_id, score * factor if item_id in in_window else score) for item_id, score in scored
    ]
    return sorted(boosted, key=lambda pair: -pair[1])


def min_max_normalise(values: Sequence[float]) -> list[float]:
    """Scale ``values`` linearly onto [0, 1]; a constant (or single) list maps to all 1.0.

    Mapping a constant list to 1.0 (rather than 0.0) means "no information to demote
    anything", so blending with a flat score list leaves the other ordering intact.
    """
    if not values:
        return []
    low, high = min(values), max(values)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError("scores must be finite")
    if high == low:
        return [1.0 for _ in values]
    span = high - low
    return [(value - low) / span for value in values]


def blend_rerank(
    fused: Sequence[tuple[str, float]],
    rerank_scores: Mapping[str, float],
    weight: float = DEFAULT_RECALL_CONFIG.rerank.weight,
) -> list[BlendedItem]:
    """Blend fused scores with cross-encoder scores: ``(1 − w)·fused_n + w·rerank_n``.

    Both score lists are min-max normalised over the candidates (fused over all of
    ``fused``; rerank over the candidates that have a rerank score). Candidates the
    reranker did not score (outside the rerank window) get ``rerank_n = 0``, i.e. they are
    treated like the worst reranked candidate. ``weight = 0`` reproduces the fused order
    and ``weight = 1`` the reranker order (unscored candidates tie with the worst scored
    one). Ties keep the input order (stable sort).
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError("weight must be in [0, 1]")
    if not fused:
        return []
    fused_norm = min_max_normalise([score for _, score in fused])
    scored_ids = [item_id for item_id, _ in fused if item_id in rerank_scores]
    rerank_norm = dict(
        zip(
            scored_ids,
            min_max_normalise([rerank_scores[item_id] for item_id in scored_ids]),
            strict=True,
        )
    )
    blended = []
    for (item_id, _), f_norm in zip(fused, fused_norm, strict=True):
        r_norm = rerank_norm.get(item_id, 0.0)
        score = (1.0 - weight) * f_norm + weight * r_norm
        blended.append(BlendedItem(item_id, score, f_norm, r_norm, item_id in rerank_norm))
    blended.sort(key=lambda item: -item.score)
    return blended


def session_rank_boost(
    scored: Sequence[tuple[str, float]],
    session_of: Mapping[str, str | None],
    session_rank: Mapping[str, int],
    weight: float,
    rrf_k: int,
) -> list[tuple[str, float]]:
    """Lift candidates of the sessions a session-level search ranked high:
    ``score_n + weight · (rrf_k + 1) / (rrf_k + 1 + rank)`` where ``score_n`` is the min-max
    normalised score and ``rank`` (0-based) the rank of the candidate's session in
    ``session_rank`` (BM25 over whole-session documents); a candidate without a session, or
    of a session the search did not rank, gets no lift. The first-ranked session gets
    ``weight``; ``rrf_k`` flattens the decay. ``weight = 0`` keeps the order. Stable."""
    if not math.isfinite(weight) or weight < 0.0:
        raise ValueError("weight must be finite and >= 0")
    if rrf_k < 0:
        raise ValueError("rrf_k must be >= 0")
    if not scored or weight == 0.0 or not session_rank:
        return list(scored)
    norm = min_max_normalise([s for _, s in scored])
    out = []
    for (item_id, _), value in zip(scored, norm, strict=True):
        rank = session_rank.get(session_of.get(item_id) or "")
        lift = 0.0 if rank is None else (rrf_k + 1) / (rrf_k + 1 + rank)
        out.append((item_id, value + weight * lift))
    return sorted(out, key=lambda pair: -pair[1])


def head_blend(
    scored: Sequence[tuple[str, float]],
    head_scores: Mapping[str, float],
    weight: float,
    window: int,
) -> list[BlendedItem]:
    """Rescore the first ``window`` items: ``(1 − w)·score_n + w·head_n``, where ``score_n``
    is the item's score min-max normalised over those items and ``head_n`` its
    ``head_scores`` value normalised over the items that have one (an item without one
    gets 0, like the worst). The rest keep their order below the head: their scores are
    normalised with the head's minimum and maximum (so they are at most 0) and scaled by
    ``1 − w``. ``weight = 0`` keeps the order. Stable: ties keep the input order.

    Used by late interaction, whose scores exist only for the head of the list."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError("weight must be in [0, 1]")
    if window < 1:
        raise ValueError("window must be >= 1")
    if not scored:
        return []
    head, tail = list(scored[:window]), list(scored[window:])
    low = min(s for _, s in head)
    high = max(s for _, s in head)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError("scores must be finite")
    span = high - low
    with_score = [item_id for item_id, _ in head if item_id in head_scores]
    head_norm = dict(
        zip(with_score, min_max_normalise([head_scores[i] for i in with_score]), strict=True)
    )

    def base(value: float) -> float:
        return 1.0 if span == 0.0 else (value - low) / span

    out = []
    for item_id, value in head:
        b, h = base(value), head_norm.get(item_id, 0.0)
        score = (1.0 - weight) * b + weight * h
        out.append(BlendedItem(item_id, score, b, h, item_id in head_norm))
    out.sort(key=lambda item: -item.score)
    floor = min(item.score for item in out)
    for item_id, value in tail:
        b = base(value) if span else -1.0
        out.append(BlendedItem(item_id, min(floor, (1.0 - weight) * b), b, 0.0, False))
    return out
