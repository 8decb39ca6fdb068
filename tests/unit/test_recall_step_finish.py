"""Steps ``order``, ``abstain`` and ``touch`` in memory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from benchmarks.presets import FUSED
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG, HeatConfig
from pipelines.recall.intent import Intent
from pipelines.recall.steps.abstain import Abstain
from pipelines.recall.steps.order import Order, time_order
from pipelines.recall.steps.touch import Touch, touch_rows
from tests.unit.recall_state import NOW, cand, ctx, plan, state

T = datetime(2023, 1, 1, tzinfo=UTC)
POOL = [
    cand("late", event_time=T + timedelta(days=2), text="Ann went to Paris"),
    cand("s1#1", event_time=T, session_id="s1", turn_index=1),
    cand("s1#0", event_time=T, session_id="s1", turn_index=0),
    cand("undated"),
]
RANKING = [("late", 3.0), ("s1#1", 2.0), ("s1#0", 1.5), ("undated", 1.0)]


def test_time_order_by_time_then_session_and_turn() -> None:
    pool = {c.id: c for c in POOL}
    assert time_order(["late", "s1#1", "undated", "s1#0"], pool) == [
        "undated",
        "s1#0",
        "s1#1",
        "late",
    ]


def test_order_applies_when_asked_or_for_event_order_questions() -> None:
    event = plan(intent=Intent.EVENT_ORDER, k=3)
    timed = state(POOL, RANKING, order="time", with_plan=plan(k=3))
    assert Order().applies(timed, ctx())
    Order().run(timed, ctx())
    assert timed.results == ["s1#0", "s1#1", "late"]  # the same three, in time order
    auto = state(POOL, RANKING, order="auto", with_plan=event)
    off = merge_overrides(DEFAULT_RECALL_CONFIG, {"order": {"event_order": False}}, "recall")
    assert Order().applies(auto, ctx()) and not Order().applies(auto, ctx(off))
    ranked = state(POOL, RANKING, with_plan=event)  # order="relevance": never
    assert not Order().applies(ranked, ctx())


def test_abstain_weighs_the_evidence() -> None:
    found = state([cand("a", raw={"vector": 0.95}, text="Ann")], [("a", 1.0)], with_plan=plan(k=1))
    Abstain().run(found, ctx())
    assert found.abstention is not None and not found.abstention.abstain
    nothing = state(preset=FUSED)
    Abstain().run(nothing, ctx())
    assert nothing.abstention is not None and nothing.abstention.reason == "no_candidates"


def test_touch_writes_only_when_asked_and_there_are_results() -> None:
    assert Touch().applies(state(POOL, RANKING), ctx())
    assert not Touch().applies(state(POOL, RANKING, touch=False), ctx())
    assert not Touch().applies(state(), ctx())
    rows = touch_rows(
        ["late", "undated"],
        {c.id: c for c in [cand("late", heat=0.5, last_access=NOW), cand("undated")]},
        NOW,
        HeatConfig(),
    )
    assert rows == [{"id": "late", "heat": 0.6}, {"id": "undated", "heat": 0.2}]
