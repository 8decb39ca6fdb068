"""Steps ``embed`` and ``candidates`` and the read ``lexical``: the statement's parameters, its rows
as candidates, and when a round trip is sent ahead (in memory; the round trips themselves are
integration tests)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import numpy as np

from benchmarks.presets import FULLTEXT
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.presets import DENSE, FAST, FULL
from pipelines.recall.request import RecallFilters, RecallRequest
from pipelines.recall.runner import Clock, start_reads
from pipelines.recall.state import SpaceProfile
from pipelines.recall.steps.candidate_query import (
    candidate_params,
    filter_params,
    has_lexical_signals,
    merge,
    parse_candidates,
)
from pipelines.recall.steps.candidates import LEXICAL
from pipelines.recall.steps.embed import Embed, needs_embedding
from pipelines.recall.time_expressions import TimeConstraint
from tests.unit.recall_state import UnitEmbedder, ctx, plan, state

CFG = DEFAULT_RECALL_CONFIG
SMALL = SpaceProfile(size=100, total=1000, speakers=())
BIG = SpaceProfile(size=50_000, total=100_000, speakers=())


def _row(item_id: str, hits: list[tuple[str, int, float]], **fields: object) -> dict:
    row = {
        "id": item_id,
        "text": f"text {item_id}",
        "speaker": "Ann",
        "role": "user",
        "kind": "turn",
        "session_id": "s1",
        "turn_index": 2,
        "stage_id": None,
        "event_time_us": 1_700_000_000_000_000,
        "ingested_at_us": None,
        "heat": 0.5,
        "last_access_us": None,
        "named_speaker_session": None,
        "hits": [{"signal": s, "qi": qi, "score": score} for s, qi, score in hits],
    }
    row.update(fields)
    return row


def test_filter_params() -> None:
    request = RecallRequest(
        query="q",
        include_superseded=True,
        filters=RecallFilters(
            stages=["Summer  Trip"], speakers=["Ann"], exclude_ids=["x"], roles=["user"]
        ),
    )
    params = filter_params(request)
    assert params["stages"] == ["Summer  Trip", "label:summer trip"]
    assert params["speakers"] == ["ann"] and params["roles"] == ["user"]
    assert params["statuses"] == ["active", "superseded"] and params["exclude_ids"] == ["x"]
    assert filter_params(RecallRequest(query="q"))["statuses"] == ["active"]


def test_candidate_params_small_and_big_spaces() -> None:
    request = RecallRequest(query="q")
    windowed = plan(windows=[TimeConstraint(datetime(2023, 5, 1, tzinfo=UTC), None, "x", "after")])
    small = candidate_params("sp", request, windowed, SMALL, CFG, [[0.1, 0.2]])
    assert small["exact"] is True and small["vector_fetch"] == small["vector_k"] == 100
    assert small["fulltext"].startswith("+space_tag:") and small["context_k"] == 0
    assert small["windows"][0]["end"].year == 9999  # an open end becomes a far date
    big = candidate_params("sp", request, windowed, BIG, CFG, [[0.1, 0.2]], ["st"])
    assert big["exact"] is False and big["vector_fetch"] == 400 and big["exact_stages"] == ["st"]
    lexical = candidate_params("sp", request, windowed, SMALL, CFG, [])
    assert lexical["windows"] == [] and has_lexical_signals(lexical)
    assert not has_lexical_signals(
        candidate_params("sp", request, plan(fulltext=None), SMALL, CFG, [])
    )


def test_rows_become_candidates_with_their_best_score_per_ranking() -> None:
    pool = parse_candidates(
        [
            _row("a", [("vector", 0, 0.9), ("vector", 0, 0.8), ("window", 1, 0.7)]),
            _row("b", [("fulltext", 0, 3.5)], text=None),
        ]
    )
    assert pool["a"].raw == {"vector": 0.9, "window:1": 0.7}
    assert pool["a"].event_time == datetime.fromtimestamp(1_700_000_000, UTC)
    assert pool["b"].raw == {"fulltext": 3.5} and pool["b"].text == ""
    more = parse_candidates([_row("a", [("fulltext", 0, 1.0)]), _row("c", [("entity", 0, 2.0)])])
    merge(pool, more)
    assert pool["a"].raw == {"vector": 0.9, "window:1": 0.7, "fulltext": 1.0}
    assert set(pool) == {"a", "b", "c"}


def test_lexical_signals_are_sent_ahead_only_with_an_executor() -> None:
    def started(s, c) -> bool:
        assert start_reads([LEXICAL], s, c, Clock(None)) == []  # the plan is there: decided
        return LEXICAL.started(s)

    assert not started(state(), ctx())
    with ThreadPoolExecutor(1) as pool:
        assert started(state(), ctx(executor=pool))
        off = merge_overrides(CFG, {"candidates": {"concurrent_signals": False}}, "recall")
        assert not started(state(), ctx(off, executor=pool))
        nothing_to_embed = state(preset=FULLTEXT, with_plan=plan(weights={"vector": 0.0}))
        assert not started(nothing_to_embed, ctx(executor=pool))


def test_embedding_is_needed_by_the_vector_signal_or_a_later_step() -> None:
    no_vector = plan(weights={"vector": 0.0})
    assert needs_embedding(state(preset=FULL, with_plan=no_vector))  # rerank, late interaction
    assert not needs_embedding(state(preset=FULLTEXT, with_plan=no_vector))
    assert needs_embedding(state(preset=DENSE))


class TokenEmbedder(UnitEmbedder):
    def encode_with_tokens(self, texts):
        return self.encode(texts), [np.ones((2, 3), dtype=np.float32) for _ in texts]


def test_embed_reads_token_vectors_only_for_late_interaction() -> None:
    s = state(preset=FULL)
    Embed().run(s, ctx(embedder=TokenEmbedder()))
    assert s.query_vector is not None and s.query_vector.shape == (4,)
    assert s.query_tokens is not None and s.query_tokens.shape == (2, 3)
    fast = state(preset=FAST)
    Embed().run(fast, ctx(embedder=TokenEmbedder()))
    assert fast.query_vector is not None and fast.query_tokens is None
    plain = state(preset=FULL)  # an embedder without token vectors: no late interaction
    Embed().run(plain, ctx(embedder=UnitEmbedder()))
    assert plain.query_vector is not None and plain.query_tokens is None


def test_as_of_and_known_at_read_superseded_memories_up_to_the_earlier_end() -> None:
    june, july = datetime(2026, 6, 1, tzinfo=UTC), datetime(2026, 7, 1, tzinfo=UTC)
    params = filter_params(
        RecallRequest(query="q", as_of=july, filters=RecallFilters(time_to=june))
    )
    assert params["time_to"] == june and params["statuses"] == ["active", "superseded"]
    assert filter_params(RecallRequest(query="q", as_of=june))["time_to"] == june
    known = filter_params(RecallRequest(query="q", known_at=june))
    assert known["time_to"] is None and known["statuses"] == ["active", "superseded"]
