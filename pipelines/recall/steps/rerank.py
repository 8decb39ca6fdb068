"""Step ``rerank``: rescore the head of the ranking with the cross-encoder when one is
loaded, else with the no-weights context reranker, blended with the current score
(:func:`blend_rerank`: min-max normalise the fused score and the reranker's over the
candidates and mix them, ``(1 − α)·fused + α·rerank``).

The context reranker (:func:`context_scores`, pure) scores a turn together with its
conversation neighbours: a conversational turn is often only intelligible with the turns
around it ("Yes, last week!" answers the question before it), so each candidate scores its
own cosine similarity to the query plus a share of the best similarity among its neighbours
(up to ``window`` turns away along NEXT edges, nearer ones counting more). The similarities
come from the embeddings already stored in the graph (computed in Cypher): no model call, no
new weights.

The context reranker's round trip also brings the head's embeddings when they will be
needed (selection, or the caller) and its late-interaction token vectors when a later step
uses them, so those steps do not read them again; neither is sent for a memory whose vectors
the process's cache holds."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from pipelines.models.late_interaction import TOKEN_FORMAT
from pipelines.recall.config import DEFAULT_RECALL_CONFIG, SIGNAL_VECTOR, RerankConfig
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
    (:func:`context_scores`)."""
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
    """Blend ``rerank_scores`` into the ranking (:func:`blend_rerank`)."""
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


def context_scores(
    own: Mapping[str, float],
    neighbours: Mapping[str, Sequence[tuple[int, float]]],
    weight: float = DEFAULT_RECALL_CONFIG.rerank.context_weight,
    window: int = DEFAULT_RECALL_CONFIG.rerank.context_window,
) -> dict[str, float]:
    """``own[id] + weight · max(0, max_n sim(n) / distance(n))`` for every id in ``own``.

    ``own`` maps ids to their cosine similarity with the query; ``neighbours[id]`` lists
    ``(distance, similarity)`` pairs of its neighbours (distance ≥ 1 turns). Neighbours
    farther than ``window`` are ignored; dividing by the distance makes adjacent turns count
    most; negative similarities add nothing.

    Raises:
        ValueError: if ``weight`` is negative or ``window`` < 0.
    """
    if weight < 0.0:
        raise ValueError("weight must be >= 0")
    if window < 0:
        raise ValueError("window must be >= 0")
    out: dict[str, float] = {}
    for item_id, sim in own.items():
        best = 0.0
        for distance, n_sim in neighbours.get(item_id, ()):
            if 1 <= distance <= window:
                best = max(best, n_sim / distance)
        out[item_id] = sim + weight * best
    return out


@dataclass(frozen=True, slots=True)
class BlendedItem:
    """A candidate after reranker blending; ``*_norm`` are the min-max normalised inputs."""

    id: str
    score: float
    fused_norm: float
    rerank_norm: float
    reranked: bool


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
