"""Step ``late_interaction``: rescore the head of the ranking by MaxSim of the query's token
vectors against each memory's stored ones (:func:`head_blend`), a
reranker that needs no new weights.

Token vectors the rerank's round trip did not bring are read here; memories without any
(stored before token vectors, or in another format: the ``token_vectors`` job fills them
in) get no late-interaction score. A long memory found by its chunks is scored by its best
chunk's token vectors."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from pipelines.models.late_interaction import late_score, unpack
from pipelines.recall.config import LateInteractionConfig
from pipelines.recall.state import Explanations, RecallState
from pipelines.recall.steps.base import RecallStep, StepContext
from pipelines.recall.steps.rerank import BlendedItem, min_max_normalise
from pipelines.recall.steps.token_reads import chunk_tokens, memory_tokens


class LateInteraction(RecallStep):
    kind: Literal["late_interaction"] = "late_interaction"
    optional = True
    explain_as = "late_interaction"
    requires = ("fuse",)
    after = ("rerank", "session_documents")
    needs_query_tokens = True

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return bool(state.order) and state.query_tokens is not None

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        assert state.query_tokens is not None  # applies() checked it
        cfg = ctx.config.late_interaction
        memory_tokens(state, ctx, state.order[: cfg.window])
        best_chunk_tokens(state, ctx, state.order[: cfg.window])
        return late_blend(state, state.query_tokens, cfg)


def best_chunk_tokens(state: RecallState, ctx: StepContext, ids: list[str]) -> None:
    """A long memory found by its chunks is scored by its best chunk's token vectors (its own
    are its first chunk's)."""
    chunks = {state.pool[i].chunks[0].span.id: i for i in ids if state.pool[i].chunks}
    if not chunks:
        return
    stamps = {c: state.pool[i].stamp for c, i in chunks.items()}
    read = chunk_tokens(ctx, {c: s for c, s in stamps.items() if s is not None})
    state.tokens.update({chunks[c]: blob for c, blob in read.items()})


def late_blend(
    state: RecallState, query_tokens: np.ndarray, cfg: LateInteractionConfig
) -> Explanations:
    """Blend the late-interaction scores of the head (from ``state.tokens``) into the
    ranking; nothing changes when fewer than two memories of the head have token vectors."""
    window = state.order[: cfg.window]
    late = {}
    for item_id in window:
        blob = state.tokens.get(item_id)
        if blob:
            late[item_id] = late_score(query_tokens, unpack(blob), cfg.length_penalty)
    if len(late) < 2:
        return {}
    before = state.scores
    blended = head_blend([(i, before[i]) for i in state.order], late, cfg.weight, cfg.window)
    notes: dict[str, dict[str, Any]] = {}
    if state.explaining:
        for b in blended:
            if b.reranked:
                notes[b.id] = {
                    "score": late[b.id],
                    "normalised": b.rerank_norm,
                    "before": before[b.id],
                    "after": b.score,
                }
    state.set_ranking([(b.id, b.score) for b in blended])
    return notes


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
