"""Step ``chunks``: the long memories whose chunks match the query. A memory longer than the
embedder's window is indexed as chunks (vector and full-text); each of its signals takes its
best chunk's score when that beats the memory's own (its mean vector, its whole text), and
the chunks that matched are kept for ``explain`` and ``/context``. A space without chunks
(every memory within the window) skips the step: no round trip, the same results."""

from __future__ import annotations

import math
from typing import Any, Literal

from pipelines import spaces
from pipelines.recall.chunks import best_chunks, merge_chunk_signals, parse_chunk_hits
from pipelines.recall.config import SIGNAL_FULLTEXT, SIGNAL_VECTOR
from pipelines.recall.query import scope_fulltext_query
from pipelines.recall.state import Candidate, Explanations, RecallState, Row
from pipelines.recall.steps.base import RecallStep, StepContext
from pipelines.recall.steps.candidate_query import candidate_params, parse_candidates


class ChunkCandidates(RecallStep):
    kind: Literal["chunks"] = "chunks"
    requires = ("understand", "candidates")
    after = ("embed",)

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return state.profile.chunks > 0

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        params = chunk_params(state, ctx)
        if params["embedding"] is None and params["fulltext"] is None:
            return None
        rows = ctx.store.read("recall/chunk_candidates", **params)
        # Adaptive over-fetch, as for memories: the approximate index is searched globally
        # and post-filtered to the space; ask again with a larger k while it came back short.
        cfg, attempt = ctx.config.candidates, 0
        wanted = min(params["vector_k"], state.profile.long_memories)
        while params["embedding"] is not None and not params["exact"]:
            if (
                _vector_memories(rows) >= wanted
                or params["vector_fetch"] >= cfg.vector_overfetch_max
            ):
                break
            attempt += 1
            larger = cfg.vector_fetch_size(
                params["vector_k"] * cfg.chunks_per_memory,
                space_size=state.profile.chunks,
                filter_selectivity=state.profile.chunk_selectivity,
                attempt=attempt,
            )
            if larger <= params["vector_fetch"]:
                break
            params.update(vector_fetch=larger, fulltext=None)
            rows = _union(rows, ctx.store.read("recall/chunk_candidates", **params))
        merge_chunk_rows(state, rows, ctx.config.fusion.rrf_k, cfg.chunk_length_penalty)
        return None


def chunk_params(state: RecallState, ctx: StepContext) -> dict[str, Any]:
    """Parameters of ``recall/chunk_candidates``: the memory candidates' filters and sizes,
    with the chunk counts in place of the memory counts (exact scan or index, over-fetch)."""
    plan, profile, cfg = state.plan, state.profile, ctx.config.candidates
    base = candidate_params(ctx.space, state.request, plan, profile, ctx.config, [])
    vector = state.query_vector
    use_vector = vector is not None and plan.weights[SIGNAL_VECTOR] > 0.0
    use_fulltext = bool(plan.fulltext) and plan.weights.get(SIGNAL_FULLTEXT, 0.0) > 0.0
    keep = (
        *("statuses", "time_from", "time_to", "roles", "speakers", "kinds", "stages"),
        *("sessions", "tags", "exclude_ids", "query_speakers", "vector_k", "fulltext_k"),
    )
    return {
        **{k: base[k] for k in keep},
        "space": ctx.space,
        "embedding": vector.tolist() if use_vector and vector is not None else None,
        "exact": cfg.use_exact_scan(profile.chunks),
        "vector_fetch": cfg.vector_fetch_size(
            base["vector_k"] * cfg.chunks_per_memory,
            space_size=profile.chunks,
            filter_selectivity=profile.chunk_selectivity,
        ),
        "fulltext": (
            scope_fulltext_query(plan.fulltext, spaces.fulltext_tag(ctx.space))
            if use_fulltext and plan.fulltext
            else None
        ),
        "fulltext_fetch": min(
            cfg.fulltext_overfetch_max,
            math.ceil(
                base["fulltext_k"]
                * cfg.chunks_per_memory
                * cfg.vector_overfetch_factor
                / max(cfg.min_filter_selectivity, profile.chunk_selectivity)
            ),
        ),
        "per_memory": cfg.chunks_per_memory,
    }


def chunk_scores(best: dict[str, float], chunks: int, penalty: float) -> dict[str, float]:
    """A long memory's best chunk score per signal, less ``penalty · ln(chunks)`` for the
    vector signal (normalised cosine): the best of many chunks matches a query better by
    chance alone, as the best token of a long text does in late interaction."""
    out = dict(best)
    if SIGNAL_VECTOR in out and chunks > 1:
        out[SIGNAL_VECTOR] -= penalty * math.log(chunks)
    return out


def merge_chunk_rows(
    state: RecallState, rows: list[Row], rrf_k: float, penalty: float = 0.0
) -> None:
    """Add the chunk rows' memories to the pool (a memory already there keeps its own
    signals and takes its chunks' where higher) with their matched chunks, best first."""
    found = parse_candidates(rows)
    for r in rows:
        cand = found[r["id"]]
        chunk_best = chunk_scores(cand.raw, cand.chunk_count, penalty)
        cand.raw = {}
        into: Candidate = state.pool.setdefault(cand.id, cand)
        into.chunk_count = cand.chunk_count
        into.chunk_signals = merge_chunk_signals(into.raw, chunk_best)
        into.chunks = best_chunks(parse_chunk_hits(r["chunks"], cand.chunk_count), rrf_k)


def _vector_memories(rows: list[Row]) -> int:
    return sum(1 for r in rows if any(h["signal"] == SIGNAL_VECTOR for h in r["hits"]))


def _union(first: list[Row], more: list[Row]) -> list[Row]:
    """Rows of two reads by memory: hits and chunks together (``more``'s replace none)."""
    by_id = {r["id"]: dict(r) for r in first}
    for r in more:
        if r["id"] in by_id:
            kept = by_id[r["id"]]
            kept["hits"] = [*kept["hits"], *r["hits"]]
            kept["chunks"] = [*kept["chunks"], *r["chunks"]]
        else:
            by_id[r["id"]] = dict(r)
    return list(by_id.values())
