"""Steps ``embeddings`` and ``select`` in memory: MMR over the oversampled head, with session
novelty for requests across sessions."""

from __future__ import annotations

import numpy as np

from benchmarks.presets import FUSED
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.request import RecallFilters
from pipelines.recall.steps.embeddings import Embeddings, parse_embeddings
from pipelines.recall.steps.select import Select, session_novelty
from tests.unit.recall_state import cand, ctx, plan, state

POOL = [
    cand("a1", session_id="A"),
    cand("a2", session_id="A"),
    cand("b1", session_id="B"),
    cand("c1", session_id="C"),
]
RANKING = [("a1", 4.0), ("a2", 3.5), ("b1", 3.0), ("c1", 1.0)]
AXES = np.eye(4, dtype=np.float32)


#: Novelty not scaled by session resolution (three sessions in four candidates against k 10
#: would charge a quarter of it).
FULL_CHARGE = merge_overrides(
    DEFAULT_RECALL_CONFIG, {"selection": {"novelty_by_resolution": False}}, "recall"
)


def test_novelty_shrinks_with_the_heads_session_resolution() -> None:
    scaled, full = _state(), _state()
    Select().run(scaled, ctx())
    Select().run(full, ctx(FULL_CHARGE))
    assert full.results == ["a1", "b1"] and scaled.results == ["a1", "a2"]


def _state(**kw):
    s = state(POOL, RANKING, with_plan=plan(k=2, pool=4), **kw)
    s.embeddings = {"a1": AXES[0], "a2": AXES[1], "b1": AXES[2], "c1": AXES[3]}
    return s


def test_session_novelty_reaches_another_session() -> None:
    s = _state()
    notes = Select().run(s, ctx(FULL_CHARGE))
    assert s.results == ["a1", "b1"]  # a2 is charged for its session A
    assert notes is not None and notes["a1"]["session_penalty"] == 0.0 and notes["b1"]["rank"] == 2
    plain = _state()
    no_novelty = merge_overrides(DEFAULT_RECALL_CONFIG, {"selection": {"session_novelty": 0}}, "r")
    Select().run(plain, ctx(no_novelty))
    assert plain.results == ["a1", "a2"]


def test_the_request_sets_or_suppresses_novelty() -> None:
    own = _state(session_novelty=0.0)
    Select().run(own, ctx())
    assert own.results == ["a1", "a2"]
    one_stage = _state(filters=RecallFilters(stages=["x"]))
    assert session_novelty(one_stage, 0.25) == 0.0
    assert session_novelty(_state(), 0.25) == 0.25


def test_embeddings_are_read_for_selection_or_the_caller() -> None:
    s = _state()
    assert Embeddings().applies(s, ctx())
    assert Embeddings().run(s, ctx()) is None  # all known: nothing to read
    assert not Embeddings().applies(state(POOL, RANKING, preset=FUSED), ctx())
    wanted = state(POOL, RANKING, preset=FUSED)
    wanted.with_embeddings = True
    assert Embeddings().applies(wanted, ctx())
    rows = [{"id": "a", "embedding": [0.5, 0.5]}, {"id": "b", "embedding": None}]
    assert list(parse_embeddings(rows)) == ["a"]
