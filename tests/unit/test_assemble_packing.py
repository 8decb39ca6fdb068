"""Staged packing on in-memory candidates: minimum counts, phase shares, the top-up, the
summaries section left out when it holds nothing, and time order for event questions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.items import Evidence, Item, costs, memory_item
from pipelines.assemble.packing import minimum_count, pack_phases, seed_count
from pipelines.assemble.render import KINDS, section_text
from pipelines.prompt.blocks import StageSummaryRecord, render_summary_block
from pipelines.prompt.tokens import CharsPerToken
from pipelines.recall.service import RecallHit

EST = CharsPerToken(3)
T0 = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


def _memories(prefix: str, n: int, stage: str | None, words: int = 12) -> list[Item]:
    items = []
    for i in range(n):
        hit = RecallHit(
            id=f"{prefix}{i}",
            content=" ".join(f"word{i}x{w}" for w in range(words)),
            score=1.0 - i / 100,
            session_id=None,
            stage_id=stage,
            time=T0 - timedelta(hours=i),  # later ranks are earlier in time
            speaker="Anna",
            role="user",
        )
        items.append(memory_item(hit, Evidence(rank=i + 1), EST, with_stage=stage is not None))
    return items


def _summaries(n: int) -> list[Item]:
    out = []
    for i in range(n):
        block = render_summary_block(StageSummaryRecord(stage=f"s{i}", content="A summary. " * 8))
        out.append(Item(id=f"label:s{i}", block=block, tokens=EST.count(block) + 1))
    return out


def _used(packed, label: str | None) -> int:
    kinds = KINDS if packed.with_summaries else KINDS[:2]
    return sum(
        EST.count(section_text(kind, packed.chosen[n], label if n == 0 else None))
        for n, kind in enumerate(kinds)
    )


def test_minimum_counts_follow_the_share_at_the_expected_item_size() -> None:
    config = AssemblyConfig()
    assert minimum_count(config, 10_000) == config.max_chunks_per_phase
    assert minimum_count(config, 130) == 2  # 130 // 60
    assert minimum_count(config, 10) == 1  # never zero


def test_the_plan_fills_the_budget_by_share_and_tops_up_what_the_rendering_leaves() -> None:
    phases = [_memories("a", 30, None), _memories("b", 30, "label:other"), _summaries(5)]
    budget, split = 1_200, (0.6, 0.3, 0.1)
    packed = pack_phases(EST, phases, "orion", split, (5, 3, 0), budget, time_order=False)
    assert packed.counts[0] >= 5 and packed.counts[1] >= 3
    assert packed.counts[:2] >= list(packed.plan.counts[:2])  # the top-up only adds
    assert _used(packed, "orion") <= budget
    # one more item of phase 1 or 2 would not fit the rendered sections
    for n in (0, 1):
        more = list(packed.counts)
        more[n] += 1
        trial = [
            section_text(kind, phases[i][: more[i]], "orion" if i == 0 else None)
            for i, kind in enumerate(KINDS if packed.with_summaries else KINDS[:2])
        ]
        assert sum(EST.count(t) for t in trial) > budget
    # the chosen items are each phase's head, in rank order
    assert [i.id for i in packed.chosen[0]] == [f"a{i}" for i in range(packed.counts[0])]
    assert packed.fitted.original_tokens[0] == EST.count(packed.fitted.sections.current_stage)


def test_minimums_are_kept_even_when_they_overflow_a_tiny_budget() -> None:
    phases = [_memories("a", 10, None, words=60), [], []]
    packed = pack_phases(EST, phases, None, (0.6, 0.3, 0.1), (3, 0, 0), 100, False)
    assert packed.counts[0] == 3  # selection is by count; the decomposer condenses later
    assert not packed.with_summaries and packed.fitted.sections.stage_summaries == ""


def test_without_summary_candidates_the_section_is_left_out() -> None:
    phases = [_memories("a", 4, None), _memories("b", 4, "label:x"), []]
    packed = pack_phases(EST, phases, None, (0.6, 0.3, 0.1), (2, 2, 0), 5_000, False)
    assert packed.counts == [4, 4, 0] and not packed.with_summaries
    with_summaries = pack_phases(
        EST, [*phases[:2], _summaries(2)], None, (0.6, 0.3, 0.1), (2, 2, 0), 5_000, False
    )
    assert with_summaries.with_summaries and with_summaries.counts[2] == 2
    assert with_summaries.fitted.sections.stage_summaries.startswith("## Stage summaries")


def test_event_order_questions_show_the_chosen_records_in_time_order() -> None:
    phases = [_memories("a", 6, None), [], []]
    ranked = pack_phases(EST, phases, None, (1.0, 0.0, 0.0), (6, 0, 0), 5_000, False)
    timed = pack_phases(EST, phases, None, (1.0, 0.0, 0.0), (6, 0, 0), 5_000, True)
    assert [i.id for i in ranked.chosen[0]] == [f"a{i}" for i in range(6)]
    assert [i.id for i in timed.chosen[0]] == [f"a{i}" for i in reversed(range(6))]


def test_the_seeds_are_what_phase_ones_share_holds() -> None:
    phase1 = _memories("a", 20, None)
    per_item = costs(phase1)
    assert seed_count(phase1, 0, 2) == 2  # the minimum, whatever the share
    share = sum(per_item[:7])
    assert seed_count(phase1, share, 2) == 7
    assert seed_count([], 1_000, 5) == 0
