"""Step ``late_interaction`` in memory: token vectors already read (by the rerank's round
trip) rescore the head without another read."""

from __future__ import annotations

import numpy as np

from pipelines.models.late_interaction import pack
from pipelines.recall.config import LateInteractionConfig
from pipelines.recall.steps.late_interaction import LateInteraction, late_blend
from tests.unit.recall_state import cand, ctx, state

QUERY = np.eye(2, 128, dtype=np.float32)
MATCH = pack(np.eye(2, 128, dtype=np.float32))
MISS = pack(np.eye(2, 128, 7, dtype=np.float32))


def _state(**kw):
    s = state([cand("a"), cand("b"), cand("c")], [("a", 3.0), ("b", 2.0), ("c", 1.0)], **kw)
    s.query_tokens = QUERY
    return s


def test_the_head_is_rescored_by_maxsim() -> None:
    s = _state()
    s.tokens = {"a": MISS, "b": MATCH, "c": None}
    assert LateInteraction().applies(s, ctx())
    notes = LateInteraction().run(s, ctx())  # every token vector is known: no read
    assert s.order[0] == "b"  # the matching memory rises (weight 0.4 of the blend)
    assert notes is not None and set(notes) == {"a", "b"}  # c has no token vectors
    assert notes["b"]["normalised"] == 1.0 and notes["b"]["before"] == 2.0
    assert notes["b"]["after"] == s.scores["b"]


def test_fewer_than_two_scored_memories_change_nothing() -> None:
    s = _state()
    s.tokens = {"a": MATCH, "b": None, "c": None}
    assert late_blend(s, QUERY, LateInteractionConfig()) == {}
    assert s.order == ["a", "b", "c"] and s.scores["a"] == 3.0


def test_without_query_tokens_the_step_does_not_apply() -> None:
    s = _state()
    s.query_tokens = None
    assert not LateInteraction().applies(s, ctx())
