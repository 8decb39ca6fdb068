"""Step ``rerank`` in memory: the cross-encoder blend, the context reranker's scores, and what
its round trip leaves for later steps."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.presets import FUSED_RERANK
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG, RerankConfig
from pipelines.recall.steps.rerank import (
    Rerank,
    best_chunk_scores,
    blend,
    context_rerank_scores,
    keep_context_reads,
)
from tests.unit.recall_state import cand, ctx, state


class LengthReranker:
    """Scores a passage by its length (an in-memory cross-encoder stand-in)."""

    def score(self, query, passages):
        return [float(len(p)) for p in passages]


def _state(**kw):
    pool = [cand("a", text="short"), cand("b", text="a much longer passage"), cand("c", text="mid")]
    return state(pool, [("a", 3.0), ("b", 2.0), ("c", 1.0)], **kw)


def test_a_cross_encoder_rescores_the_head() -> None:
    s = _state()
    notes = Rerank().run(s, ctx(reranker=LengthReranker()))
    assert s.order[0] == "b"  # the longest passage, weight 0.55 of the blend
    assert notes is not None and notes["b"]["method"] == "cross_encoder"
    assert notes["b"]["normalised"] == 1.0 and notes["b"]["blended"] == s.scores["b"]


def test_no_cross_encoder_and_no_fallback_changes_nothing() -> None:
    s = _state()
    s.query_vector = np.ones(4, dtype=np.float32)
    off = merge_overrides(DEFAULT_RECALL_CONFIG, {"rerank": {"fallback": "none"}}, "recall")
    assert Rerank().run(s, ctx(off)) is None
    assert s.order == ["a", "b", "c"]
    assert not Rerank().applies(state(), ctx())  # nothing ranked: nothing to rerank


def test_context_scores_add_the_best_neighbour() -> None:
    rows = [
        {"id": "a", "score": 0.75, "neighbours": [{"distance": 1, "score": 1.0}, None]},
        {"id": "b", "score": 1.0, "neighbours": []},
    ]
    scores = context_rerank_scores(rows, RerankConfig())
    assert scores == {"a": 0.5 + 1.0, "b": 1.0}


def test_a_long_memory_is_scored_by_its_best_chunk_when_that_is_higher() -> None:
    rows = [
        {"id": "long", "score": 0.6, "neighbours": []},
        {"id": "short", "score": 0.8, "neighbours": []},
    ]
    scores = context_rerank_scores(rows, RerankConfig(), {"long": 0.9, "short": 0.5})
    assert scores == pytest.approx({"long": 0.8, "short": 0.6})  # cosines: 2 * s - 1
    # which memories have such a score: those whose vector score their chunks decided
    s = state(
        [
            cand("long", chunk_count=4, chunk_signals=["vector"], raw={"vector": 0.9}),
            cand("text", chunk_count=4, chunk_signals=["fulltext"], raw={"vector": 0.7}),
            cand("short", raw={"vector": 0.8}),
        ],
        [("long", 3.0), ("text", 2.0), ("short", 1.0)],
    )
    assert best_chunk_scores(s, s.order) == {"long": 0.9}


def test_the_context_round_trip_leaves_embeddings_and_token_vectors() -> None:
    s = _state()
    rows = [
        {"id": "a", "embedding": [1.0, 0.0], "tokens": b"\x01"},
        {"id": "b", "embedding": None, "tokens": None},
    ]
    keep_context_reads(s, rows, with_tokens=True)
    assert list(s.embeddings) == ["a"] and s.embeddings["a"].dtype == np.float32
    assert s.tokens == {"a": b"\x01", "b": None}
    keep_context_reads(other := _state(), rows, with_tokens=False)
    assert other.tokens == {}
    # vectors the token cache already gave are not replaced by the row's (sent none)
    cached = _state()
    cached.tokens["a"] = b"\x02"
    keep_context_reads(cached, [{**rows[0], "tokens": None}], with_tokens=True)
    assert cached.tokens == {"a": b"\x02"}


def test_blend_without_explanations() -> None:
    s = _state(explain=False, preset=FUSED_RERANK)
    assert blend(s, {"c": 1.0, "a": 0.0}, 1.0, "context") == {}
    assert s.order[0] == "c"
