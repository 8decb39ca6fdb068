"""Step ``fuse``: weighted RRF of every signal's ranking, then multiplicative boosts.

Heat and recency rank the pool the content signals found (a signal that hardly varies over
it is dropped); then candidates inside a time window the query names, said by a speaker it
names, or from the conversations those speakers took part in are boosted, and conversation
turns that end by asking a question are scaled down (``fusion.question_turn_factor``).

Pure algorithms:

* :func:`weighted_rrf` — weighted reciprocal rank fusion (Cormack et al., 2009, with
  per-signal weights as in Bruch et al., 2023): ``score(d) = Σ_s w_s / (k + rank_s(d))``
  with 1-based ranks. Only ranks matter, so signals on incomparable scales (cosine, BM25,
  heat, recency) fuse without calibration.
* :func:`signal_reliability` — a per-query factor on each signal's weight from how far its
  best score stands above its other top scores (:func:`top_peak`): a flat signal abstains.
* :func:`temporal_boost` — multiply the score of candidates inside a query's time window
  by a constant factor (a conditional, multiplicative re-weighting).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal

from pipelines.recall.config import (
    DEFAULT_RECALL_CONFIG,
    SIGNAL_HEAT,
    SIGNAL_RECENCY,
    SIGNAL_STANDING,
    SIGNAL_VECTOR,
    RecallConfig,
)
from pipelines.recall.heat import effective_heat, recency_score
from pipelines.recall.intent import Intent
from pipelines.recall.query import ends_with_question
from pipelines.recall.state import (
    SIGNAL_WINDOW,
    Candidate,
    Explanations,
    Plan,
    RecallState,
    cosine_from_neo4j,
    ranked,
)
from pipelines.recall.steps.base import RecallStep, StepContext

_CONTEXT_SIGNALS = (SIGNAL_HEAT, SIGNAL_RECENCY)


class Fuse(RecallStep):
    kind: Literal["fuse"] = "fuse"
    requires = ("understand", "candidates")

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        fused, notes, speaker_match = fuse(state.pool, state.plan, ctx.config, state.explaining)
        state.set_ranking(fused)
        state.speaker_match = speaker_match
        return notes


def rankings(pool: dict[str, Candidate], plan: Plan, config: RecallConfig) -> dict[str, list[str]]:
    """Per-signal rankings (best first; ties by id for determinism)."""
    by_name: dict[str, list[tuple[float, str]]] = {}
    for c in pool.values():
        for name, score in c.raw.items():
            if name in _CONTEXT_SIGNALS:
                continue  # recomputed below from the stored values
            by_name.setdefault(name, []).append((score, c.id))
    out = {name: ranked(items) for name, items in by_name.items()}
    # Heat and recency rank the pool (content candidates, plus their own ones when
    # configured); a signal that hardly varies over the pool says nothing and is dropped.
    content = [c for c in pool.values() if any(n not in _CONTEXT_SIGNALS for n in c.raw)]
    own = config.candidates.context_signals_add_candidates
    members = list(pool.values()) if own else content
    heat, fusion = config.heat, config.fusion
    context: dict[str, list[tuple[float, str]]] = {SIGNAL_HEAT: [], SIGNAL_RECENCY: []}
    half_life = timedelta(days=fusion.recency_half_life_days)
    for c in members:
        if plan.weights[SIGNAL_HEAT] > 0.0 and c.heat is not None:
            since = c.last_access or c.ingested_at
            value = (
                effective_heat(c.heat, since, plan.now, heat.decay_rate_per_day, heat.floor)
                if since is not None
                else c.heat
            )
            context[SIGNAL_HEAT].append((value, c.id))
        if plan.weights[SIGNAL_RECENCY] > 0.0 and c.event_time is not None:
            context[SIGNAL_RECENCY].append((recency_score(c.event_time, plan.now, half_life), c.id))
    for name, items in context.items():
        if len(items) < 2:
            continue
        values = [v for v, _ in items]
        if max(values) - min(values) < fusion.min_signal_spread:
            continue
        out[name] = [i for _, i in sorted(items, key=lambda p: (-p[0], p[1]))]
    return out


def fuse(
    pool: dict[str, Candidate],
    plan: Plan,
    config: RecallConfig,
    explain: bool,
) -> tuple[list[tuple[str, float]], Explanations, float | None]:
    """The fused ranking, its explanations (when ``explain``), and the share of the best
    content matches (before the speaker boost) said by a speaker the query names
    (:func:`speaker_share`; ``None``: it names none)."""
    signal_rankings = rankings(pool, plan, config)
    weights = signal_weights(pool, plan, config, signal_rankings)
    fused = weighted_rrf(signal_rankings, weights, config.fusion.rrf_k)
    boosted = Boosts([(f.id, f.score) for f in fused])
    speaker_match = apply_boosts(boosted, pool, plan, config)
    notes = explain_fusion(fused, pool, weights, boosted.applied) if explain else {}
    return boosted.ranking, notes, speaker_match


class Boosts:
    """A ranking under multiplicative boosts, and which boost each candidate had."""

    def __init__(self, ranking: list[tuple[str, float]]) -> None:
        self.ranking = ranking
        self.applied: dict[str, dict[str, float]] = {}

    def boost(self, ids: set[str], factor: float, name: str) -> None:
        """Multiply the scores of ``ids`` by ``factor`` and say so in the explanation."""
        self.ranking = temporal_boost(self.ranking, ids, factor)
        for item_id in ids:
            self.applied.setdefault(item_id, {})[name] = factor


def apply_boosts(
    boosted: Boosts,
    pool: dict[str, Candidate],
    plan: Plan,
    config: RecallConfig,
) -> float | None:
    """Boost, in this order: the query's time windows, its speakers (their turns, then their
    conversations), the asker's own turns, and scale down conversation turns that end by
    asking a question (the question prior: a question asks for information and rarely holds
    it; the answer does; a note that asks something is left alone); return the speaker share
    measured before the speaker boost."""
    cfg = config.fusion
    if plan.windows:
        in_window = {
            c.id
            for c in pool.values()
            if c.event_time is not None and any(w.contains(c.event_time) for w in plan.windows)
        }
        if in_window:
            boosted.boost(in_window, cfg.temporal_boost_factor, "time")
    speaker_match = None
    if plan.query_speakers:
        named = {s.casefold() for s in plan.query_speakers}
        spoken = {c.id for c in pool.values() if (c.speaker or "").casefold() in named}
        top_n = config.abstention.speaker_top_n
        speaker_match = speaker_share(boosted.ranking, pool, spoken, top_n)
        if spoken:
            boosted.boost(spoken, cfg.speaker_boost_factor, "speaker")
        # Their conversations: a boost only where it separates (in a space whose every
        # session includes the named speaker it would lift everything alike).
        with_speaker = {c.id for c in pool.values() if c.named_speaker_session}
        factor = cfg.speaker_session_boost_factor
        if with_speaker and len(with_speaker) < len(pool) and factor != 1.0:
            boosted.boost(with_speaker, factor, "speaker_session")
    # (a summary spans both parties: what was asked and what was answered)
    if (
        plan.first_person
        and plan.intent is not Intent.SUMMARIZATION
        and cfg.first_person_user_factor != 1.0
    ):
        own = {c.id for c in pool.values() if c.role == "user"}
        if own and len(own) < len(pool):
            boosted.boost(own, cfg.first_person_user_factor, "first_person")
    if cfg.question_turn_factor != 1.0:
        asking = {c.id for c in pool.values() if c.kind == "turn" and ends_with_question(c.text)}
        if asking:
            boosted.boost(asking, cfg.question_turn_factor, "question")
    return speaker_match


def explain_fusion(
    fused: list[FusedItem],
    pool: dict[str, Candidate],
    weights: dict[str, float],
    boosts: dict[str, dict[str, float]],
) -> Explanations:
    """Each fused candidate's signals (rank, score, weight, contribution), score and boosts."""
    notes: Explanations = {}
    for f in fused:
        c = pool[f.id]
        signals: dict[str, Any] = {
            name: {
                "rank": rank,
                "score": explain_score(name, c),
                "weight": weights.get(name, 0.0),
                "contribution": f.contributions.get(name, 0.0),
            }
            for name, rank in f.ranks.items()
        }
        notes[f.id] = {"signals": signals, "fused": f.score, "boosts": boosts.get(f.id, {})}
    return notes


def speaker_share(
    ranking: list[tuple[str, float]], pool: dict[str, Candidate], spoken: set[str], n: int
) -> float | None:
    """Share of the best ``n`` content matches said by the named speakers (``spoken``),
    among the matches from conversations those speakers took part in: in a space shared by
    many conversations the others' turns say nothing about who said what in theirs. A
    memory outside any session counts; 0 when only other conversations matched, ``None``
    when nothing did."""
    if not ranking:
        return None
    top = [i for i, _ in ranking if pool[i].named_speaker_session is not False][:n]
    return sum(1 for i in top if i in spoken) / len(top) if top else 0.0


def signal_weights(
    pool: dict[str, Candidate],
    plan: Plan,
    config: RecallConfig,
    signal_rankings: dict[str, list[str]],
) -> dict[str, float]:
    """Each ranking's weight: the intent's profile, time windows as the vector signal, the
    standing ranking its own, all scaled by per-query reliability when configured."""
    cfg = config.fusion
    weights = dict(plan.weights)
    weights[SIGNAL_STANDING] = cfg.standing_weight
    for name in signal_rankings:
        if name.startswith(SIGNAL_WINDOW + ":"):
            weights[name] = plan.weights[SIGNAL_VECTOR] * cfg.time_window_weight
    if cfg.reliability_top_n:
        content = content_scores(pool, signal_rankings)
        for name, factor in signal_reliability(content, cfg.reliability_top_n).items():
            weights[name] = weights.get(name, 0.0) * factor
    return weights


def content_scores(
    pool: dict[str, Candidate], signals: dict[str, list[str]]
) -> dict[str, list[float]]:
    """The raw scores of each content signal that ranks the pool (heat and recency aside)."""
    return {
        name: [pool[i].raw[name] for i in order]
        for name, order in signals.items()
        if name not in _CONTEXT_SIGNALS
    }


def explain_score(name: str, c: Candidate) -> float | None:
    """The score a ranking saw, for the explanation (cosine for vector rankings)."""
    if name == SIGNAL_VECTOR or name.startswith(SIGNAL_WINDOW + ":"):
        return cosine_from_neo4j(c.raw[name])
    if name == SIGNAL_HEAT:
        return c.heat
    if name == SIGNAL_RECENCY:
        return None if c.event_time is None else c.event_time.timestamp()
    return c.raw.get(name)


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
