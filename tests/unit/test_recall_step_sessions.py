"""The read ``session_ranking``, steps ``session_documents`` and ``session_late_interaction``
in memory: when they apply, and how candidates are lifted by their session's rank."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from pipelines.models.late_interaction import pack
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.request import RecallFilters
from pipelines.recall.state import session_scope
from pipelines.recall.steps.session_documents import (
    SESSION_RANKING,
    SessionDocuments,
    lift_weight,
    pool_resolution,
    session_lift,
)
from pipelines.recall.steps.session_late_interaction import (
    SessionLateInteraction,
    head_sessions,
    session_scores,
)
from tests.unit.recall_state import cand, ctx, plan, state

POOL = [
    cand("a1", session_id="A"),
    cand("b1", session_id="B"),
    cand("a2", session_id="A"),
    cand("n", session_id=None),
]
RANKING = [("a1", 4.0), ("b1", 3.0), ("a2", 2.0), ("n", 1.0)]


def test_session_scope() -> None:
    assert session_scope(state().request)
    assert not session_scope(
        state(filters=RecallFilters(time_to=datetime(2023, 1, 1, tzinfo=UTC))).request
    )
    assert not session_scope(state(filters=RecallFilters(stages=["x"])).request)
    assert not session_scope(state(filters=RecallFilters(sessions=["A", "A"])).request)
    assert session_scope(state(filters=RecallFilters(sessions=["A", "B"])).request)


def test_the_session_ranking_needs_full_text_terms_and_a_weight() -> None:
    read = SESSION_RANKING
    assert read.ready(state()) and read.wanted(state(), ctx())
    assert not read.wanted(state(with_plan=plan(fulltext=None)), ctx())
    off = merge_overrides(DEFAULT_RECALL_CONFIG, {"session_documents": {"weight": 0}}, "recall")
    assert not read.wanted(state(), ctx(off))


def test_session_documents_lift_the_ranked_sessions() -> None:
    s = state(POOL, RANKING)
    s.reads["session_ranking"] = lambda: ["B", "A"]
    assert SessionDocuments().applies(s, ctx())
    heavy = merge_overrides(
        DEFAULT_RECALL_CONFIG,
        {"session_documents": {"weight": 1}, "fusion": {"session_lift_by_resolution": False}},
        "recall",
    )
    notes = SessionDocuments().run(s, ctx(heavy))
    # normalised score + weight / (1 + session rank): b1 2/3 + 1 beats a1 1 + 1/2
    assert s.order == ["b1", "a1", "a2", "n"]
    assert notes is not None and notes["b1"]["rank"] == 0 and notes["a1"]["rank"] == 1
    assert notes["n"]["rank"] is None and notes["n"]["after"] == 0.0  # no session: no lift
    assert notes["a1"]["before"] == 4.0 and notes["a1"]["after"] == s.scores["a1"]
    assert not SessionDocuments().applies(state(POOL, RANKING), ctx())  # nothing was sent


def test_session_lift_with_scores_and_without_explanations() -> None:
    s = state(POOL, RANKING)
    notes = session_lift(s, ["A", "B"], 0.3, 0, {"A": 0.9, "B": 0.1})
    assert notes["a1"]["score"] == 0.9 and notes["b1"]["score"] == 0.1
    quiet = state(POOL, RANKING, explain=False)
    assert session_lift(quiet, ["B"], 0.3, 0) == {} and quiet.order[0] == "a1"


def test_session_late_interaction_applies_to_requests_across_sessions() -> None:
    s = state(POOL, RANKING)
    step = SessionLateInteraction()
    assert not step.applies(s, ctx())  # no query token vectors
    s.query_tokens = np.ones((2, 4), dtype=np.float32)
    assert step.applies(s, ctx())
    one = state(POOL, RANKING, filters=RecallFilters(sessions=["A"]))
    one.query_tokens = s.query_tokens
    assert not step.applies(one, ctx())
    assert head_sessions(s, 3) == ["A", "B"] and head_sessions(s, 1) == ["A"]
    alone = state(POOL[:1], RANKING[:1])
    alone.query_tokens = s.query_tokens
    assert step.run(alone, ctx()) is None  # one session: nothing to rank, nothing read


def test_session_scores_are_maxsim_over_all_of_a_session() -> None:
    query = np.eye(2, 128, dtype=np.float32)
    near, far = pack(np.eye(2, 128, dtype=np.float32)), pack(np.eye(2, 128, 5, dtype=np.float32))
    tokens = {"A": [near, far], "B": [far], "C": []}
    scores = session_scores(tokens, query, 0.0)
    assert set(scores) == {"A", "B"} and scores["A"] > scores["B"]


def test_session_lifts_fade_when_few_sessions_hold_the_pool() -> None:
    """With ``fusion.session_lift_by_resolution`` (the default) the lift's weight is scaled
    by how finely the ranking's head splits into sessions against k: POOL's effective
    sessions are 1 / (0.5² + 0.25² + 0.25²) = 8/3 (A, B, and the sessionless memory alone)."""
    s = state(POOL, RANKING)
    k = DEFAULT_RECALL_CONFIG.fusion.session_resolution_k
    resolution = pool_resolution(s, DEFAULT_RECALL_CONFIG)
    assert resolution == min(1.0, (8 / 3) / k)
    assert lift_weight(s, 0.3, DEFAULT_RECALL_CONFIG) == 0.3 * resolution
    off = merge_overrides(
        DEFAULT_RECALL_CONFIG, {"fusion": {"session_lift_by_resolution": False}}, "recall"
    )
    assert lift_weight(s, 0.3, off) == 0.3
