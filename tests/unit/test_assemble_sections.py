"""Tests for section rendering and flat-baseline packing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.assemble.render import SectionKind, build_sections, pack_to_budget, top_up
from pipelines.prompt.blocks import DATA_NOTICE, MemoryRecord, StageSummaryRecord


def test_build_sections_labels_and_orders_everything() -> None:
    sections = build_sections(
        current=[MemoryRecord("m1", "current fact", "user", "t1", "s3")],
        related=[MemoryRecord("m7", "older fact", "assistant", "t0", "s1")],
        summaries=[StageSummaryRecord("s2", "Decisions: X")],
    )
    text = sections.as_text()
    headers = [line for line in text.splitlines() if line.startswith("## ")]
    assert headers == ["## Current stage", "## Related prior context", "## Stage summaries"]
    assert text.count(DATA_NOTICE) == 3
    assert text.index("[t1 | s3]\nuser: current fact") < text.index("[t0 | s1]\nassistant: older")
    assert text.index("[t0 | s1]\nassistant:") < text.index('<summary stage="s2"')
    assert text.count("<memories>") == text.count("</memories>") == 2
    assert sections.current_stage.startswith(SectionKind.CURRENT_STAGE.header)


def test_empty_sections_say_so_explicitly() -> None:
    sections = build_sections([], [], [])
    assert sections.current_stage == (
        "## Current stage\n(No memories were recalled for the current stage.)"
    )
    assert "<memories>" not in sections.as_text() and "</memories>" not in sections.as_text()
    assert DATA_NOTICE not in sections.as_text()


def test_pack_to_budget_skips_items_that_do_not_fit_and_reports_them() -> None:
    items = [("a", 50), ("b", 80), ("c", 30), ("d", 20), ("e", 0)]
    result = pack_to_budget(items, 100)
    assert result.kept == ("a", "c", "d", "e")
    assert result.dropped == ("b",)
    assert result.used_tokens == 100


@given(
    tokens=st.lists(st.integers(0, 100), max_size=30),
    budget=st.integers(-10, 500),
)
def test_pack_to_budget_properties(tokens: list[int], budget: int) -> None:
    items = list(enumerate(tokens))
    result = pack_to_budget(items, budget)
    assert result.used_tokens <= max(budget, 0)
    assert sorted(result.kept + result.dropped) == list(range(len(tokens)))
    assert list(result.kept) == sorted(result.kept)  # rank order preserved
    assert result.used_tokens == sum(tokens[i] for i in result.kept)
    for i in result.dropped:  # every dropped item really did not fit when reached
        before = sum(tokens[k] for k in result.kept if k < i)
        assert before + tokens[i] > budget


def test_pack_to_budget_charges_a_group_line_once_with_its_first_kept_item() -> None:
    items = [("a", 30), ("b", 30), ("c", 30), ("d", 10)]
    groups = [("day1", 5), ("day2", 5), ("day1", 5), ("day3", 5)]
    # a (30 + 5) + b (30 + 5) + c (30, day1 already open) = 100; d would need 10 + 5.
    result = pack_to_budget(items, 100, groups)
    assert result.kept == ("a", "b", "c")
    assert result.dropped == ("d",)
    assert result.used_tokens == 100
    # Without the groups the same items cost 90 and d fits.
    assert pack_to_budget(items, 100).kept == ("a", "b", "c", "d")
    with pytest.raises(ValueError, match="one"):
        pack_to_budget(items, 100, groups[:2])


@settings(max_examples=200, deadline=None)
@given(
    entries=st.lists(
        st.tuples(st.integers(0, 60), st.sampled_from("abcd")), min_size=0, max_size=25
    ),
    group_tokens=st.integers(0, 10),
    budget=st.integers(-5, 400),
)
def test_pack_to_budget_with_groups_pays_exactly_what_the_kept_items_render(
    entries: list[tuple[int, str]], group_tokens: int, budget: int
) -> None:
    items = [(n, tokens) for n, (tokens, _) in enumerate(entries)]
    groups = [(group, group_tokens) for _, group in entries]
    result = pack_to_budget(items, budget, groups)
    kept_groups = {entries[n][1] for n in result.kept}
    assert result.used_tokens == sum(entries[n][0] for n in result.kept) + group_tokens * len(
        kept_groups
    )
    assert result.used_tokens <= max(budget, 0)
    assert sorted(result.kept + result.dropped) == list(range(len(entries)))


def test_top_up_adds_further_items_in_rank_order_while_the_whole_fits() -> None:
    sizes = [5, 9, 3, 4, 1]

    def fits(chosen: list[int]) -> bool:
        return sum(sizes[n] for n in chosen) <= 12

    # 0 and 2 were kept (8); 1 (9) no longer fits, 3 (4) does, then 4 (1) does not.
    assert top_up(len(sizes), [2, 0], fits) == [0, 2, 3]
    assert top_up(len(sizes), [], lambda chosen: False) == []
    assert top_up(0, [], fits) == []


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 30), max_size=15),
    limit=st.integers(0, 120),
    data=st.data(),
)
def test_top_up_keeps_what_was_kept_and_leaves_nothing_that_would_fit(
    sizes: list[int], limit: int, data: st.DataObject
) -> None:
    kept = data.draw(st.lists(st.integers(0, max(len(sizes) - 1, 0)), unique=True)) if sizes else []

    def fits(chosen: list[int]) -> bool:
        return sum(sizes[n] for n in chosen) <= limit

    if not fits(kept):
        return
    result = top_up(len(sizes), kept, fits)
    assert result == sorted(result) and set(kept) <= set(result)
    assert fits(result)
    assert all(not fits(sorted([*result, n])) for n in range(len(sizes)) if n not in result)
