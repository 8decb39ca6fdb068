"""Long memories in recall: a memory longer than the embedder's window is indexed as
chunks (:mod:`pipelines.ingest.chunking`); recall scores it by its best chunks and names them.

:class:`ChunkMatch` is one chunk a signal found, :func:`best_chunks` orders a memory's
matched chunks (reciprocal-rank fusion of the signals that found them, as memories are
fused), and :func:`merge_chunk_signals` gives the memory each signal's best chunk score when
it beats the memory's own (its mean vector, its whole text)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipelines.graph import GraphStore


@dataclass(frozen=True)
class ChunkSpan:
    """A chunk of a long memory: its id, position among the memory's ``of`` chunks, and its
    span ``[start, end)`` of the memory's text."""

    id: str
    index: int
    start: int
    end: int
    of: int

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, "index": self.index, "start": self.start, "end": self.end}


@dataclass
class ChunkMatch:
    """A chunk some signals found, with each one's raw score (vector: Neo4j's normalised
    cosine; fulltext: BM25)."""

    span: ChunkSpan
    scores: dict[str, float] = field(default_factory=dict)


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
