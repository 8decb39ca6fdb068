"""Tests for the assembly service's pure planning helpers."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.items import (
    StageSpan,
    dates_needing_minutes,
    grouped_costs,
    record_time,
    short_time,
)
from pipelines.assemble.packing import extend_prefixes, plan_phase_counts
from pipelines.assemble.related import combine_seed_runs, seed_groups
from pipelines.assemble.stage import vote_stages
from pipelines.assemble.summaries import order_stages_by_distance, render_schema
from pipelines.prompt.decomposer import Slot, decompose
from pipelines.prompt.template import build_template, prompt_budget
from pipelines.prompt.tokens import CharsPerToken
from tests.ppr_reference import personalized_pagerank

EST = CharsPerToken()


def test_build_template_orders_caller_slots_preamble_sections_query() -> None:
    t = build_template(["SYSTEM", "RECENT"], ["A", "B"], "QUERY", "Query", "NOTE")
    assert t == "{{SYSTEM}}\n\n{{RECENT}}\n\nNOTE\n\n{{A}}\n\n{{B}}\n\n## Query\n{{QUERY}}"
    assert build_template([], ["A"], "Q", "Question") == "{{A}}\n\n## Question\n{{Q}}"
    with pytest.raises(ValueError):
        build_template([], ["A"], "Q", "Q", preamble="{{A}}")


@settings(max_examples=60, deadline=None)
@given(
    window=st.integers(1, 20_000),
    headroom=st.sampled_from([0.5, 0.75, 0.8, 1.0]),
    preamble=st.text(max_size=400).filter(lambda s: "{{" not in s),
    n_leading=st.integers(0, 3),
)
def test_prompt_budget_matches_the_decomposer(
    window: int, headroom: float, preamble: str, n_leading: int
) -> None:
    leading = [f"L{i}" for i in range(n_leading)]
    template = build_template(leading, ["A", "B"], "Q", "Query", preamble or None)
    keys = [*leading, "A", "B", "Q"]
    config = AssemblyConfig()
    budget = prompt_budget(template, keys, window, headroom, EST, config)
    result = decompose(template, [Slot(k, "x", 1) for k in keys], window, headroom, EST, config)
    assert (budget.ceiling, budget.shell_tokens, budget.budget) == (
        result.ceiling,
        result.shell_tokens,
        result.budget,
    )
    assert (budget.limit, budget.content_budget) == (result.limit, result.content_budget)


def test_plan_takes_minimums_then_shares_then_leftover_in_phase_order() -> None:
    # budget 100 -> shares 60/30/10
    plan = plan_phase_counts([[20] * 10, [20] * 10, [20] * 10], 100, (0.6, 0.3, 0.1), (1, 1, 0))
    assert plan.shares == (60, 30, 10)
    # phase 1: 3 items (60); phase 2: 1 (minimum; a second does not fit 30); phase 3: none;
    # leftover 100 - 80 = 20 -> one more item for phase 1
    assert plan.counts == (4, 1, 0) and plan.tokens == (80, 20, 0) and plan.unused == 0


def test_plan_minimum_count_is_kept_even_for_long_items() -> None:
    plan = plan_phase_counts([[500, 500, 500], [], []], 300, (0.6, 0.3, 0.1), (2, 5, 0))
    assert plan.counts == (2, 0, 0) and plan.tokens == (1000, 0, 0)


def test_plan_unused_budget_flows_back_to_earlier_phases() -> None:
    # phase 2 and 3 have nothing: phase 1 may use the whole budget
    plan = plan_phase_counts([[10] * 20, [], []], 100, (0.6, 0.3, 0.1), (0, 0, 0))
    assert plan.counts == (10, 0, 0) and plan.unused == 0


@settings(max_examples=200, deadline=None)
@given(
    tokens=st.lists(st.lists(st.integers(0, 80), max_size=15), min_size=3, max_size=3),
    budget=st.integers(-5, 600),
    minimums=st.lists(st.integers(0, 4), min_size=3, max_size=3),
    split=st.sampled_from([(0.6, 0.3, 0.1), (1.0, 0.0, 0.0), (0.2, 0.2, 0.6), (0.5, 0.5, 0.0)]),
)
def test_plan_properties(
    tokens: list[list[int]], budget: int, minimums: list[int], split: tuple[float, ...]
) -> None:
    plan = plan_phase_counts(tokens, budget, split, minimums)
    floor_tokens = 0
    for i in range(3):
        assert min(minimums[i], len(tokens[i])) <= plan.counts[i] <= len(tokens[i])
        assert plan.tokens[i] == sum(tokens[i][: plan.counts[i]])
        floor_tokens += sum(tokens[i][: min(minimums[i], len(tokens[i]))])
    # never more than the budget beyond what the minimums force
    assert sum(plan.tokens) <= max(max(budget, 0), floor_tokens)
    # nothing that would still fit was left out: the next item of every phase is too big
    left = max(budget, 0) - sum(plan.tokens)
    for i in range(3):
        if plan.counts[i] < len(tokens[i]):
            assert tokens[i][plan.counts[i]] > left
    assert plan.unused == max(left, 0)


def test_grouped_costs_charge_each_group_line_to_its_first_item() -> None:
    items = [("d1", 20, 4), ("d2", 30, 4), ("d1", 10, 4), (None, 50, 9), ("d2", 5, 4)]
    assert grouped_costs(items) == [24, 34, 10, 50, 5]
    assert grouped_costs([]) == []


@settings(max_examples=200, deadline=None)
@given(
    items=st.lists(
        st.tuples(st.sampled_from(["a", "b", "c", None]), st.integers(0, 50), st.integers(0, 9)),
        max_size=20,
    )
)
def test_grouped_costs_are_exact_for_every_prefix(
    items: list[tuple[str | None, int, int]],
) -> None:
    costs = grouped_costs(items)
    for n in range(len(items) + 1):
        first_of_group: dict[str, int] = {}
        for group, _, group_tokens in items[:n]:
            if group is not None:
                first_of_group.setdefault(group, group_tokens)
        assert sum(costs[:n]) == sum(t for _, t, _ in items[:n]) + sum(first_of_group.values())


def test_extend_prefixes_grows_phases_in_order_while_the_whole_fits() -> None:
    sizes = [[5, 5, 5, 5], [3, 3, 3], [9]]

    def fits(counts: list[int]) -> bool:
        return sum(sum(sizes[n][: counts[n]]) for n in range(3)) <= 18

    # phase 1 grows from 1 to 3 items (15), then phase 2 by one (18); phase 3 is not asked.
    assert extend_prefixes([1, 0, 0], [4, 3, 1], fits, phases=(0, 1)) == [3, 1, 0]
    # all phases by default; prefixes never shrink, even when the start does not fit
    assert extend_prefixes([4, 3, 1], [4, 3, 1], fits) == [4, 3, 1]
    with pytest.raises(ValueError, match="same length"):
        extend_prefixes([1, 0], [4, 3, 1], fits)


def test_plan_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        plan_phase_counts([[1], [1]], 10, (0.5, 0.5), (0, 0))
    with pytest.raises(ValueError):
        plan_phase_counts([[-1], [], []], 10, (0.6, 0.3, 0.1), (0, 0, 0))


def test_order_stages_by_distance_nearest_in_time_first() -> None:
    t0 = datetime(2025, 1, 1, tzinfo=UTC)

    def span(sid: str, day: int, days: int = 1, ordinal: int | None = None) -> StageSpan:
        return StageSpan(sid, t0 + timedelta(days=day), t0 + timedelta(days=day + days), ordinal)

    current = span("c", 10, ordinal=5)
    stages = [span("far", 0, ordinal=0), span("next", 12, ordinal=6), span("prev", 8, ordinal=4)]
    stages.append(StageSpan("untimed", None, None, 9))
    stages.append(span("overlap", 10, 3, ordinal=7))
    stages.append(current)  # the current stage itself is never listed
    assert order_stages_by_distance(current, stages) == [
        "overlap",
        "prev",
        "next",
        "far",
        "untimed",
    ]
    # equal gaps: earlier stage first (prev 1 day before, next 1 day after)
    tie = [span("after", 12, ordinal=6), span("before", 8, ordinal=4)]
    assert order_stages_by_distance(span("c", 10, 1, 5), tie) == ["before", "after"]
    # no current stage: most recent first
    assert order_stages_by_distance(None, stages[:3]) == ["next", "prev", "far"]


def test_render_schema_compact_and_tolerant() -> None:
    assert render_schema(
        {"summary": "  trip: 5 memories. Decisions: fly. ", "entities": ["x"]}
    ) == ("trip: 5 memories. Decisions: fly.")
    text = render_schema(
        {
            "summary": " ",
            "entities": ["Berlin", {"name": "Lufthansa"}, "", None],
            "decisions": ["fly on Friday"],
            "outcomes": [],
            "open_questions": "which hotel?",
            "other": "ignored",
        }
    )
    assert text == (
        "Entities: Berlin, Lufthansa\nDecisions:\n- fly on Friday\nOpen questions:\n- which hotel?"
    )
    assert render_schema({}) == ""


def test_short_time() -> None:
    assert short_time(None) is None
    assert short_time(datetime(2025, 3, 1, 10, 5, 33, tzinfo=UTC)) == "2025-03-01 10:05"
    assert short_time(datetime(2025, 3, 1, 10, 5)) == "2025-03-01 10:05"


def test_minutes_are_shown_only_on_dates_whose_records_differ_in_them() -> None:
    session = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a session stamped once
    chat = [datetime(2023, 6, 1, 9, 0, tzinfo=UTC), datetime(2023, 6, 1, 17, 30, tzinfo=UTC)]
    lone = datetime(2023, 7, 2, 8, 15, tzinfo=UTC)
    seconds_apart = datetime(2023, 5, 8, 13, 56, 40, tzinfo=UTC)  # same minute as `session`
    cest = timezone(timedelta(hours=2))
    late = datetime(2023, 7, 3, 1, 0, tzinfo=cest)  # 2023-07-02 23:00 UTC: the lone day's
    needed = dates_needing_minutes([session, seconds_apart, *chat, lone, None, late])
    assert needed == {date(2023, 6, 1), date(2023, 7, 2)}

    assert record_time(session, "auto", needed) == "2023-05-08"
    assert record_time(chat[0], "auto", needed) == "2023-06-01 09:00"
    assert record_time(late, "auto", needed) == "2023-07-02 23:00"  # UTC, like short_time
    assert record_time(lone, "minute") == "2023-07-02 08:15"
    assert record_time(chat[1], "date", needed) == "2023-06-01"
    assert record_time(None, "auto", needed) is None
    assert dates_needing_minutes([]) == frozenset()
    with pytest.raises(ValueError, match="precision"):
        record_time(lone, "second")


def test_seed_groups_group_equal_weights_heaviest_first() -> None:
    groups = seed_groups({"a": 0.5, "b": 0.25, "c": 0.25, "d": 0.0, "e": 1 / 3, "f": 1 / 3})
    assert groups == [(0.5, ["a"]), (round(1 / 3, 9), ["e", "f"]), (0.25, ["b", "c"])]


@settings(max_examples=40, deadline=None)
@given(
    edges=st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(1, 5)), min_size=6, max_size=20
    ),
    counts=st.lists(st.integers(0, 3), min_size=7, max_size=7),
)
def test_grouped_runs_combine_to_the_weighted_seed_run(
    edges: list[tuple[int, int, int]], counts: list[int]
) -> None:
    """One multi-source run per weight group (GDS convention: the sum of the single-source
    runs) combined linearly equals the PPR with the weighted seed vector."""
    nodes = list(range(7))
    connected = [(u, v, float(w)) for u, v, w in edges] + [(i, i + 1, 1.0) for i in range(6)]
    weights = {n: float(c) for n, c in enumerate(counts) if c > 0}
    if not weights:
        return
    total = sum(weights.values())
    weights = {n: w / total for n, w in weights.items()}

    def run(seeds: list[int]) -> dict[int, float]:  # GDS: sum of single-source runs
        r = personalized_pagerank(nodes, connected, {s: 1.0 for s in seeds}, tolerance=1e-12)
        return {n: len(seeds) * v for n, v in r.items()}

    groups = seed_groups(weights)
    combined = combine_seed_runs(
        {g: run(keys) for g, (_, keys) in enumerate(groups)},
        {g: w for g, (w, _) in enumerate(groups)},
    )
    expected = personalized_pagerank(nodes, connected, weights, tolerance=1e-12)
    scale = sum(combined.values())
    for n in nodes:
        assert combined[n] / scale == pytest.approx(expected[n], abs=1e-6)


def test_vote_stages_counts_ranked_hits_and_summaries() -> None:
    recency = {"a": 1.0, "b": 2.0, "c": 3.0}
    config = AssemblyConfig(stage_vote_rank_constant=0)
    # a: 1/1 + 1/4; b: 1/2 + 1/3 -> a wins (1.25 vs 0.83)
    choice = vote_stages(["a", "b", "b", "a", None, "gone"], {}, recency, config)
    assert choice.stage == "a" and choice.runner_up == "b" and not choice.fallback
    assert choice.scores["a"] == pytest.approx(1.25) and choice.margin == pytest.approx(
        1.25 - 5 / 6
    )
    # summaries add votes by their own ranking (weight 0.5): c's top summary is not enough...
    choice = vote_stages(["a", "b", "b", "a"], {"c": 0.9, "b": 0.1}, recency, config)
    assert choice.scores["c"] == pytest.approx(0.5) and choice.scores["b"] == pytest.approx(
        1.0833, abs=1e-4
    )
    assert choice.stage == "a"
    # ...unless the hits say nothing
    assert vote_stages([], {"c": 0.9, "b": 0.1}, recency, config).stage == "c"


def test_vote_stages_ties_go_to_the_most_recent_and_no_evidence_falls_back() -> None:
    recency = {"old": 1.0, "new": 2.0}
    config = AssemblyConfig(stage_vote_rank_constant=5, stage_tie_margin=0.2)
    choice = vote_stages(["old", "new"], {}, recency, config)  # 1/6 vs 1/7: within 20 %
    assert choice.stage == "new" and choice.tie_broken_by_recency
    fallback = vote_stages([None], {}, recency, config)
    assert fallback.stage == "new" and fallback.fallback and fallback.score is None
    assert vote_stages([], {}, {}, config).stage is None


def test_stage_confidence_and_confident_split() -> None:
    from pipelines.assemble.stage import StageChoice, confident_split, stage_confidence

    config = AssemblyConfig(stage_confidence_floor=0.2, stage_confidence_full=0.6)

    def choice(score: float | None, margin: float | None, fallback: bool = False) -> StageChoice:
        return StageChoice(
            "s", score, "r" if margin is not None else None, margin, False, fallback, {}, ""
        )

    assert stage_confidence(choice(1.0, None), config) == 1.0  # nobody else got a vote
    assert stage_confidence(choice(1.0, 0.6), config) == 1.0
    assert stage_confidence(choice(1.0, 0.4), config) == pytest.approx(0.5)
    assert stage_confidence(choice(1.0, 0.1), config) == 0.0
    assert stage_confidence(choice(None, None, fallback=True), config) == 0.0
    assert confident_split((0.6, 0.3, 0.1), 1.0) == (0.6, 0.3, 0.1)
    first, second, third = confident_split((0.6, 0.3, 0.1), 0.5)
    assert (first, second, third) == pytest.approx((0.3, 0.6, 0.1))
    assert sum(confident_split((0.6, 0.3, 0.1), 0.0)) == pytest.approx(1.0)
