"""Step ``chunks``: the long memories whose chunks match the query. A memory longer than the
embedder's window is indexed as chunks (:mod:`pipelines.ingest.chunking`, vector and
full-text); each of its signals takes its best chunk's score when that beats the memory's own
(its mean vector, its whole text), and the chunks that matched are kept for ``explain`` and
``/context``. A space without chunks (every memory within the window) skips the step: no
round trip, the same results.

Pure helpers: :func:`best_chunks` orders a memory's matched chunks (reciprocal-rank fusion
of the signals that found them, as memories are fused), :func:`merge_chunk_signals` gives
the memory each signal's best chunk score when it beats its own, :func:`explain_chunks` says
what ``explain`` shows; :func:`first_chunks` reads what a long memory shows when no chunk of
it matched."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pipelines import spaces
from pipelines.graph import GraphStore
from pipelines.recall.config import SIGNAL_FULLTEXT, SIGNAL_VECTOR
from pipelines.recall.query import scope_fulltext_query
from pipelines.recall.request import ChunkSpan
from pipelines.recall.state import Candidate, ChunkMatch, Explanations, RecallState, Row
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


def parse_chunk_hits(rows: Iterable[Mapping[str, Any]], of: int) -> list[ChunkMatch]:
    """The statement's chunk hits of one memory (one per chunk and signal) by chunk."""
    by_id: dict[str, ChunkMatch] = {}
    for r in rows:
        span = ChunkSpan(
            id=str(r["id"]), index=int(r["index"]), start=int(r["start"]), end=int(r["end"]), of=of
        )
        match = by_id.setdefault(span.id, ChunkMatch(span))
        score = float(r["score"])
        signal = str(r["signal"])
        if signal not in match.scores or score > match.scores[signal]:
            match.scores[signal] = score
    return list(by_id.values())


def best_chunks(matches: Sequence[ChunkMatch], rrf_k: float) -> list[ChunkMatch]:
    """A memory's matched chunks, best first: each signal ranks them, a chunk scores the sum
    of ``1 / (rrf_k + rank)`` over the signals that found it; ties by position."""
    fused: dict[str, float] = {m.span.id: 0.0 for m in matches}
    signals = {s for m in matches for s in m.scores}
    for signal in signals:
        found = [m for m in matches if signal in m.scores]
        found.sort(key=lambda m: (-m.scores[signal], m.span.index))
        for rank, m in enumerate(found, start=1):
            fused[m.span.id] += 1.0 / (rrf_k + rank)
    return sorted(matches, key=lambda m: (-fused[m.span.id], m.span.index))


def merge_chunk_signals(raw: dict[str, float], chunk_best: Mapping[str, float]) -> list[str]:
    """Give a memory's signals their best chunk score where it is higher than the memory's
    own (``raw``, updated in place); the signals its chunks decided, sorted."""
    decided = []
    for signal, score in chunk_best.items():
        if signal not in raw or score > raw[signal]:
            raw[signal] = score
            decided.append(signal)
    return sorted(decided)


def explain_chunks(
    matches: Sequence[ChunkMatch], of: int, decided: Sequence[str]
) -> dict[str, Any]:
    """What ``explain`` says of a long memory's chunks: how many it has, the signals its
    chunks decided, and the matched chunks, best first, with their scores."""
    return {
        "of": of,
        "signals": list(decided),
        "matched": [{**m.span.describe(), "scores": _shown(m.scores)} for m in matches],
    }


def _shown(scores: Mapping[str, float]) -> dict[str, float]:
    """Scores as explanations show them: cosine for the vector signal (Neo4j reports
    ``(1 + cos) / 2``), BM25 as it is."""
    return {k: round(2.0 * v - 1.0 if k == "vector" else v, 6) for k, v in sorted(scores.items())}


def first_chunks(store: GraphStore, space: str, ids: Sequence[str]) -> dict[str, tuple[ChunkSpan]]:
    """The first chunk of each long memory of ``ids`` in ``space`` (what a long memory shows
    when no chunk of it matched the query)."""
    rows = store.read("recall/first_chunks", space=space, ids=list(ids))
    return {
        str(r["memory_id"]): (
            ChunkSpan(
                id=str(r["id"]),
                index=int(r["index"]),
                start=int(r["start"]),
                end=int(r["end"]),
                of=int(r["of"]),
            ),
        )
        for r in rows
    }
