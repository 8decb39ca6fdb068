"""Where the units of deleted stages went: the pure plan of stage_redirects."""

from __future__ import annotations

from pipelines.consolidate.stage_redirects import EmptiedStage, absorb_plan


def test_a_stage_moved_into_one_target_is_absorbed_by_it() -> None:
    assert absorb_plan([EmptiedStage("gap:1", ("community:a",))]) == {"community:a": ["gap:1"]}


def test_a_split_stage_is_absorbed_by_every_target() -> None:
    plan = absorb_plan([EmptiedStage("gap:1", ("community:a", "community:b"))])
    assert plan == {"community:a": ["gap:1"], "community:b": ["gap:1"]}


def test_ids_absorbed_before_pass_on_with_the_stage() -> None:
    plan = absorb_plan([EmptiedStage("community:a", ("community:b",), ("gap:1", "gap:2"))])
    assert plan == {"community:b": ["community:a", "gap:1", "gap:2"]}


def test_a_target_deleted_at_the_same_time_passes_its_ids_on() -> None:
    plan = absorb_plan(
        [
            EmptiedStage("gap:1", ("community:a",)),
            EmptiedStage("community:a", ("community:b",), ("gap:0",)),
        ]
    )
    assert plan == {"community:b": ["gap:1", "community:a", "gap:0"]}


def test_moves_in_a_circle_end_nowhere_and_terminate() -> None:
    plan = absorb_plan([EmptiedStage("a", ("b",)), EmptiedStage("b", ("a",))])
    assert plan == {}


def test_a_stage_emptied_by_deletions_alone_records_nothing() -> None:
    assert absorb_plan([EmptiedStage("gap:1", ())]) == {}


def test_a_target_never_absorbs_its_own_id() -> None:
    plan = absorb_plan([EmptiedStage("community:a", ("community:b",), ("community:b", "gap:1"))])
    assert plan == {"community:b": ["community:a", "gap:1"]}
