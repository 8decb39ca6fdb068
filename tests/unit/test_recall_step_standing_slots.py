"""Step ``standing_slots`` in memory: the best standing statements' turns keep a place among
the results."""

from __future__ import annotations

from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.steps.standing import StandingSlots, with_standing
from tests.unit.recall_state import cand, ctx, plan, state


def _state(k: int = 3):
    pool = [
        cand("a"),
        cand("b"),
        cand("c"),
        cand("rule", raw={"standing": 0.8}),
        cand("pref", raw={"standing": 0.75}),
    ]
    ranking = [("a", 5.0), ("b", 4.0), ("c", 3.0), ("pref", 2.0), ("rule", 1.0)]
    return state(pool, ranking, with_plan=plan(k=k))


def test_the_best_standing_turn_takes_the_last_place() -> None:
    s = _state()
    notes = StandingSlots().run(s, ctx())
    assert s.results == ["a", "b", "rule"]
    assert notes == {"rule": {"standing_slot": True}}


def test_more_slots_take_more_places_best_first() -> None:
    s = _state()
    assert with_standing(["a", "b", "c"], s, 2) == ["a", "rule", "pref"]
    assert with_standing(["a", "b", "c"], s, 9) == ["a", "rule", "pref"]
    assert with_standing(["a", "b", "c"], _state(k=2), 2) == ["a", "rule"]  # the first stays
    assert with_standing(["a"], _state(k=1), 1) == ["a"]
    assert with_standing([], _state(k=1), 1) == ["rule"]


def test_a_standing_turn_already_chosen_keeps_its_place() -> None:
    s = _state()
    assert with_standing(["rule", "a", "b"], s, 1) == ["rule", "a", "b"]
    assert with_standing(["a"], s, 1) == ["a", "rule"]  # room left: nothing is dropped


def test_no_standing_candidate_or_no_slot_changes_nothing() -> None:
    s = state([cand("a"), cand("b")], [("a", 2.0), ("b", 1.0)])
    assert with_standing(["a", "b"], s, 1) == ["a", "b"]
    off = merge_overrides(DEFAULT_RECALL_CONFIG, {"selection": {"standing_slots": 0}}, "recall")
    assert not StandingSlots().applies(_state(), ctx(off))
    assert StandingSlots().applies(_state(), ctx())
