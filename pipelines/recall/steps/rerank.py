"""Step ``rerank``: rescore the head of the ranking with the cross-encoder when one is
loaded, else with the no-weights context reranker (a turn scored together with its
conversation neighbours), blended with the current score.

The context reranker's round trip also brings the head's embeddings when they will be
needed (selection, or the caller) and its late-interaction token vectors when a later step
uses them, so those steps do not read them again; neither is sent for a memory whose vectors
the process's cache holds."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from pipelines.models.late_interaction import TOKEN_FORMAT
from pipelines.recall.config import SIGNAL_VECTOR, RerankConfig
from pipelines.recall.fusion import blend_rerank
from pipelines.recall.rerank import context_scores
from pipelines.recall.state import Explanations, RecallState, Row, cosine_from_neo4j
from pipelines.recall.steps.base import RecallStep, StepContext
from pipelines.recall.steps.token_reads import (
    cached,
    cached_embeddings,
    keep,
    keep_embeddings,
    memory_stamps,
)


class Rerank(RecallStep):
    kind: Literal["rerank"] = "rerank"
    optional = True
    explain_as = "rerank"
    requires = ("fuse",)
    after = ("embed",)
    needs_query_vector = True

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return bool(state.order)

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        cfg = ctx.config.rerank
        window = state.order[: cfg.window]
        if ctx.reranker is not None:
            raw = ctx.reranker.score(state.plan.content, [state.pool[i].passage for i in window])
            return blend(state, dict(zip(window, raw, strict=True)), cfg.weight, "cross_encoder")
        if cfg.fallback != "context" or state.query_vector is None:
            return None
        with_tokens = state.query_tokens is not None
        stamps = memory_stamps(state, window)
        if with_tokens:
            state.tokens.update(cached(ctx, stamps))
        if state.wants_embeddings:
            state.embeddings.update(cached_embeddings(ctx, stamps))
        rows = ctx.store.read(
            "recall/context",
            space=ctx.space,
            ids=window,
            embedding=state.query_vector.tolist(),
            window=cfg.context_window,
            with_embeddings=state.wants_embeddings,
            token_format=TOKEN_FORMAT if with_tokens else None,
            cached=[i for i in window if i in state.tokens],
            cached_embeddings=[i for i in window if i in state.embeddings],
        )
        keep_context_reads(state, rows, with_tokens)
        if with_tokens:
            keep(ctx, stamps, {r["id"]: r["tokens"] for r in rows})
        keep_embeddings(
            ctx,
            stamps,
            {r["id"]: state.embeddings[r["id"]] for r in rows if r["embedding"] is not None},
        )
        chunks = best_chunk_scores(state, window) if cfg.context_best_chunk else {}
        return blend(state, context_rerank_scores(rows, cfg, chunks), cfg.context_blend, "context")


def keep_context_reads(state: RecallState, rows: list[Row], with_tokens: bool) -> None:
    """Keep the embeddings (and token vectors) the context reranker's rows brought (a
    memory whose vectors came from the cache is sent none)."""
    for r in rows:
        if r["embedding"] is not None:
            state.embeddings[r["id"]] = np.asarray(r["embedding"], dtype=np.float32)
        if with_tokens and r["id"] not in state.tokens:
            state.tokens[r["id"]] = r["tokens"]


def best_chunk_scores(state: RecallState, ids: list[str]) -> dict[str, float]:
    """The vector score of each long memory of ``ids`` whose best chunk decided it."""
    return {
        i: state.pool[i].raw[SIGNAL_VECTOR]
        for i in ids
        if SIGNAL_VECTOR in state.pool[i].chunk_signals
    }


def context_rerank_scores(
    rows: list[Row], cfg: RerankConfig, best_chunk: dict[str, float] | None = None
) -> dict[str, float]:
    """The context reranker's score of each row: its cosine with the query (or its best
    chunk's, ``best_chunk``, when higher) plus the best of its neighbours'
    (:func:`~pipelines.recall.rerank.context_scores`)."""
    chunks = best_chunk or {}
    return context_scores(
        {r["id"]: cosine_from_neo4j(max(r["score"], chunks.get(r["id"], 0.0))) for r in rows},
        {
            r["id"]: [
                (int(n["distance"]), cosine_from_neo4j(n["score"]))
                for n in r["neighbours"]
                if n is not None
            ]
            for r in rows
        },
        cfg.context_weight,
        cfg.context_window,
    )


def blend(
    state: RecallState, rerank_scores: dict[str, float], weight: float, method: str
) -> Explanations:
    """Blend ``rerank_scores`` into the ranking (:func:`~pipelines.recall.fusion.blend_rerank`)."""
    blended = blend_rerank([(i, state.scores[i]) for i in state.order], rerank_scores, weight)
    state.set_ranking([(b.id, b.score) for b in blended])
    notes: dict[str, dict[str, Any]] = {}
    if state.explaining:
        for b in blended:
            notes[b.id] = {
                "method": method,
                "score": rerank_scores.get(b.id),
                "normalised": b.rerank_norm,
                "blended": b.score,
            }
    return notes
