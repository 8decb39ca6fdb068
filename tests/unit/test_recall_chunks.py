"""Long memories in recall, in memory: chunk hits ordered within their memory, a memory's
signals taken from its best chunk when higher, the ``chunks`` step's parameters and merge,
and a long memory's excerpt in a context (the round trips are integration tests)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from pipelines.assemble.items import GAP, excerpt
from pipelines.recall.request import ChunkSpan
from pipelines.recall.state import ChunkMatch, SpaceProfile
from pipelines.recall.steps.chunks import (
    ChunkCandidates,
    best_chunks,
    chunk_params,
    chunk_scores,
    explain_chunks,
    merge_chunk_rows,
    merge_chunk_signals,
    parse_chunk_hits,
)
from tests.unit.recall_state import cand, ctx, state
from tests.unit.test_recall_step_candidates import _row


def _hit(signal: str, index: int, score: float) -> dict[str, object]:
    return {
        "signal": signal,
        "id": f"doc#c{index}",
        "index": index,
        "start": index * 10,
        "end": index * 10 + 8,
        "score": score,
    }


def test_chunk_hits_by_chunk_with_their_best_score_per_signal() -> None:
    hits = [_hit("vector", 3, 0.9), _hit("vector", 3, 0.95), _hit("fulltext", 3, 4.0)]
    (match,) = parse_chunk_hits(hits, of=40)
    assert match.span == ChunkSpan("doc#c3", 3, 30, 38, 40)
    assert match.scores == {"vector": 0.95, "fulltext": 4.0}


def test_a_chunk_found_by_both_signals_ranks_first() -> None:
    matches = parse_chunk_hits(
        [
            _hit("vector", 1, 0.90),  # best by vector alone
            _hit("vector", 7, 0.85),
            _hit("fulltext", 7, 2.0),  # second by vector, first by BM25
            _hit("fulltext", 9, 1.0),
        ],
        of=20,
    )
    assert [m.span.index for m in best_chunks(matches, rrf_k=60)] == [7, 1, 9]
    # ties (one signal each, same rank) by position in the memory
    tied = parse_chunk_hits([_hit("vector", 5, 0.8), _hit("fulltext", 2, 3.0)], of=20)
    assert [m.span.index for m in best_chunks(tied, rrf_k=60)] == [2, 5]


def test_a_memory_takes_its_best_chunk_score_only_when_higher() -> None:
    raw = {"vector": 0.70, "fulltext": 5.0, "entity": 1.0}
    decided = merge_chunk_signals(raw, {"vector": 0.86, "fulltext": 3.0})
    assert decided == ["vector"]
    assert raw == {"vector": 0.86, "fulltext": 5.0, "entity": 1.0}
    fresh: dict[str, float] = {}
    assert merge_chunk_signals(fresh, {"fulltext": 3.0}) == ["fulltext"] and fresh == {
        "fulltext": 3.0
    }


def test_explain_names_the_chunks_with_cosines() -> None:
    match = ChunkMatch(ChunkSpan("doc#c3", 3, 30, 38, 40), {"vector": 0.9, "fulltext": 2.5})
    out = explain_chunks([match], 40, ["vector"])
    assert out == {
        "of": 40,
        "signals": ["vector"],
        "matched": [
            {
                "id": "doc#c3",
                "index": 3,
                "start": 30,
                "end": 38,
                "scores": {"fulltext": 2.5, "vector": 0.8},
            }
        ],
    }


def test_the_step_runs_only_in_spaces_with_chunks() -> None:
    s = state()
    assert not ChunkCandidates().applies(s, ctx())
    s.profile = SpaceProfile(size=100, total=1000, speakers=(), chunks=5, total_chunks=50)
    assert ChunkCandidates().applies(s, ctx())


def test_chunk_params_scale_with_the_chunks_not_the_memories() -> None:
    s = state()
    s.query_vector = np.ones(4, dtype=np.float32)
    s.profile = SpaceProfile(size=10, total=20, speakers=(), chunks=100, total_chunks=100)
    small = chunk_params(s, ctx())
    assert small["exact"] is True and small["embedding"] == [1.0] * 4
    assert small["fulltext"].startswith("+space_tag:") and small["per_memory"] == 3
    s.profile = SpaceProfile(size=10, total=20, speakers=(), chunks=50_000, total_chunks=500_000)
    big = chunk_params(s, ctx())
    assert big["exact"] is False
    assert big["vector_fetch"] == 2_000  # 100 memories x 3 chunks, over-fetched, capped
    s.plan_ = replace(s.plan, fulltext=None, weights={**s.plan.weights, "vector": 0.0})
    nothing = chunk_params(s, ctx())
    assert nothing["embedding"] is None and nothing["fulltext"] is None


def test_chunk_rows_join_the_pool() -> None:
    s = state([cand("doc", text="x" * 100, chunk_count=0)], [("doc", 1.0)])
    s.pool["doc"].raw = {"vector": 0.6, "fulltext": 9.0}
    rows = [
        _row(
            "doc",
            [("vector", 0, 0.9), ("fulltext", 0, 2.0)],
            chunk_count=12,
            chunks=[_hit("vector", 4, 0.9), _hit("fulltext", 4, 2.0), _hit("vector", 8, 0.7)],
        ),
        _row("new", [("fulltext", 0, 1.5)], chunk_count=3, chunks=[_hit("fulltext", 0, 1.5)]),
    ]
    merge_chunk_rows(s, rows, rrf_k=60)
    doc, new = s.pool["doc"], s.pool["new"]
    assert doc.raw == {"vector": 0.9, "fulltext": 9.0} and doc.chunk_signals == ["vector"]
    assert doc.chunk_count == 12 and [m.span.index for m in doc.chunks] == [4, 8]
    assert doc.passage == doc.text[40:48]
    assert new.raw == {"fulltext": 1.5} and new.chunk_signals == ["fulltext"]


def test_a_long_memory_shows_its_chunks_and_what_was_left_out() -> None:
    text = "".join(f"part {i:02d}.\n\n" for i in range(40))  # 10 characters per part
    spans = [ChunkSpan(f"d#c{i}", i, i * 10, i * 10 + 8, 40) for i in (12, 3, 4)]
    one = excerpt("d", text, spans, shown=1)
    assert (
        one == f"part 12.\n[… chunk 13 of 40 of memory d; {len(text) - 8:,} characters left out …]"
    )
    three = excerpt("d", text, spans, shown=3).split("\n")
    assert three[:4] == ["part 03.", "part 04.", GAP, "part 12."]  # text order, gap marked
    assert three[4].startswith("[… chunks 4, 5, 13 of 40 of memory d;")
    assert excerpt("d", "short", (), shown=1) == "short"  # a memory within the window
    big = "y" * 2_012_345
    marker = excerpt("doc", big, [ChunkSpan("doc#c11", 11, 0, 0, 3_701)], shown=1)
    assert marker.endswith("[… chunk 12 of 3,701 of memory doc; 2,012,345 characters left out …]")


def test_a_long_memorys_best_chunk_pays_for_its_number_of_chunks() -> None:
    best = {"vector": 0.9, "fulltext": 3.0}
    assert chunk_scores(best, 1, 0.02) == best
    out = chunk_scores(best, 10, 0.02)
    assert out["fulltext"] == 3.0 and abs(out["vector"] - (0.9 - 0.02 * math.log(10))) < 1e-12
    assert chunk_scores(best, 10, 0.0) == best
