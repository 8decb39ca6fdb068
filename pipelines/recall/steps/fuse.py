"""Step ``fuse`` (pure): weighted RRF of every signal's ranking, then multiplicative boosts.

Heat and recency rank the pool the content signals found (a signal that hardly varies over
it is dropped); then candidates inside a time window the query names, said by a speaker it
names, or from the conversations those speakers took part in are boosted, and (with
``question_prior``) conversation turns that end by asking a question are scaled down."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from pipelines.recall.config import (
    SIGNAL_HEAT,
    SIGNAL_RECENCY,
    SIGNAL_STANDING,
    SIGNAL_VECTOR,
    RecallConfig,
)
from pipelines.recall.fusion import signal_reliability, temporal_boost, weighted_rrf
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
    #: Scale down conversation turns that end by asking a question
    #: (``fusion.question_turn_factor``): a question asks for information and rarely holds
    #: it; the answer does. Other kinds of memory (a note that asks something) are left alone.
    question_prior: bool = False

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        fused, notes, speaker_match = fuse(
            state.pool, state.plan, ctx.config, self.question_prior, state.explaining
        )
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
    question_prior: bool,
    explain: bool,
) -> tuple[list[tuple[str, float]], Explanations, float | None]:
    """The fused ranking, its explanations (when ``explain``), and the share of the best
    content matches (before the speaker boost) said by a speaker the query names
    (:func:`speaker_share`; ``None``: it names none)."""
    cfg = config.fusion
    signal_rankings = rankings(pool, plan, config)
    weights = signal_weights(pool, plan, config, signal_rankings)
    fused = weighted_rrf(signal_rankings, weights, cfg.rrf_k)
    ranking = [(f.id, f.score) for f in fused]
    boosts: dict[str, dict[str, float]] = {}

    def boost(ids: set[str], factor: float, name: str) -> None:
        """Multiply the scores of ``ids`` by ``factor`` and say so in the explanation."""
        nonlocal ranking
        ranking = temporal_boost(ranking, ids, factor)
        for item_id in ids:
            boosts.setdefault(item_id, {})[name] = factor

    if plan.windows:
        in_window = {
            c.id
            for c in pool.values()
            if c.event_time is not None and any(w.contains(c.event_time) for w in plan.windows)
        }
        if in_window:
            boost(in_window, cfg.temporal_boost_factor, "time")
    speaker_match = None
    if plan.query_speakers:
        named = {s.casefold() for s in plan.query_speakers}
        spoken = {c.id for c in pool.values() if (c.speaker or "").casefold() in named}
        speaker_match = speaker_share(ranking, pool, spoken, config.abstention.speaker_top_n)
        if spoken:
            boost(spoken, cfg.speaker_boost_factor, "speaker")
        # Their conversations: a boost only where it separates (in a space whose every
        # session includes the named speaker it would lift everything alike).
        with_speaker = {c.id for c in pool.values() if c.named_speaker_session}
        factor = cfg.speaker_session_boost_factor
        if with_speaker and len(with_speaker) < len(pool) and factor != 1.0:
            boost(with_speaker, factor, "speaker_session")
    # (a summary spans both parties: what was asked and what was answered)
    if (
        plan.first_person
        and plan.intent is not Intent.SUMMARIZATION
        and cfg.first_person_user_factor != 1.0
    ):
        own = {c.id for c in pool.values() if c.role == "user"}
        if own and len(own) < len(pool):
            boost(own, cfg.first_person_user_factor, "first_person")
    if question_prior and cfg.question_turn_factor != 1.0:
        asking = {c.id for c in pool.values() if c.kind == "turn" and ends_with_question(c.text)}
        if asking:
            boost(asking, cfg.question_turn_factor, "question")
    notes: Explanations = {}
    if explain:
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
    return ranking, notes, speaker_match


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
