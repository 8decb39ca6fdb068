"""Step ``session_documents``: lift the candidates of the
conversation sessions that BM25 over whole-session documents ranks high
(:mod:`pipelines.session_documents`). A session that covers the question's words across
several turns is likely the conversation it asks about.

The read ``session_ranking`` is the session-level search, started beside the candidates (on
the executor when there is one); ``session_documents`` waits for it and lifts the ranking.
Neither runs for a request bounded in time, restricted to stages or to one session
(:func:`~pipelines.recall.state.session_scope`), or without full-text terms."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pipelines import spaces
from pipelines.recall.config import RecallConfig
from pipelines.recall.query import scope_fulltext_query
from pipelines.recall.state import Explanations, RecallState, session_scope
from pipelines.recall.steps.base import Read, RecallStep, StepContext, after_understand
from pipelines.recall.steps.rerank import min_max_normalise


def _ranking_wanted(state: RecallState, ctx: StepContext) -> bool:
    return (
        session_scope(state.request)
        and ctx.config.session_documents.weight > 0.0
        and bool(state.plan.fulltext)
    )


def _ranking_call(state: RecallState, ctx: StepContext) -> Callable[[], list[str]]:
    fulltext = state.plan.fulltext or ""
    params = {
        "space": ctx.space,
        "fulltext": scope_fulltext_query(fulltext, spaces.fulltext_tag(ctx.space), "texts"),
        "session_k": ctx.config.session_documents.k,
    }
    store = ctx.store

    def read() -> list[str]:
        rows = store.read("recall/session_ranking", **params)
        return [r["session_id"] for r in rows]

    return read


#: The session-level search (BM25 over whole-session documents), sent beside the candidates.
SESSION_RANKING = Read[list[str]](
    "session_ranking", after_understand, _ranking_wanted, _ranking_call
)


class SessionDocuments(RecallStep):
    kind: Literal["session_documents"] = "session_documents"
    explain_as = "session_document"
    requires = ("fuse",)
    reads = (SESSION_RANKING,)

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return bool(state.order) and SESSION_RANKING.started(state)

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        cfg = ctx.config.session_documents
        weight = lift_weight(state, cfg.weight, ctx.config)
        return session_lift(state, SESSION_RANKING.result(state) or [], weight, cfg.rrf_k)


def pool_resolution(state: RecallState, config: RecallConfig) -> float:
    """The session resolution (:func:`session_resolution`) of the
    ranking's first ``selection.min_pool`` candidates against ``fusion.session_resolution_k``
    results: fixed sizes, so a recall's order does not depend on the k it asks for."""
    head = state.order[: config.selection.min_pool]
    sessions = [state.pool[i].session_id for i in head]
    return session_resolution(sessions, config.fusion.session_resolution_k)


def lift_weight(state: RecallState, weight: float, config: RecallConfig) -> float:
    """A session-level lift's weight, scaled by the pool's session resolution when
    ``fusion.session_lift_by_resolution`` is on."""
    if config.fusion.session_lift_by_resolution:
        return weight * pool_resolution(state, config)
    return weight


def session_lift(
    state: RecallState,
    ranking: list[str],
    weight: float,
    rrf_k: int,
    session_scores: dict[str, float] | None = None,
) -> Explanations:
    """Lift candidates by the rank of their session in ``ranking``
    (:func:`session_rank_boost`); explain each with its session's
    rank (and score, when the ranking came from scores)."""
    pool, before = state.pool, state.scores
    rank = {session_id: r for r, session_id in enumerate(ranking)}
    boosted = session_rank_boost(
        [(i, before[i]) for i in state.order],
        {i: pool[i].session_id for i in state.order},
        rank,
        weight,
        rrf_k,
    )
    notes: dict[str, dict[str, Any]] = {}
    if state.explaining:
        for item_id, score in boosted:
            session_id = pool[item_id].session_id
            entry: dict[str, Any] = {"session": session_id, "rank": rank.get(session_id or "")}
            if session_scores is not None:
                entry["score"] = session_scores.get(session_id or "")
            notes[item_id] = entry | {"before": before[item_id], "after": score}
    state.set_ranking(boosted)
    return notes


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
