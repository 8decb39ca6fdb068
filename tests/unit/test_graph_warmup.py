"""The plan warmer: parameter shapes, one entry per statement and parameter types, the most
run first, the budget and the limit."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime

from pipelines.graph_warmup import MAX_SIZE, PlanWarmer, bucket_size, kind, shape


def test_bucket_size_is_the_smallest_length_of_its_power_of_ten() -> None:
    sizes = {n: bucket_size(n) for n in (0, 1, 2, 10, 11, 54, 100, 101, 1000, 10**7)}
    assert sizes == {
        0: 0,
        1: 1,
        2: 2,
        10: 2,
        11: 11,
        54: 11,
        100: 11,
        101: 101,
        1000: 101,
        10**7: MAX_SIZE,
    }


def test_shape_keeps_types_and_length_buckets_and_no_data() -> None:
    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    value = {"v": [0.5] * 384, "text": "secret " * 8, "rows": [{"id": "a", "n": 7}] * 50}
    shaped = shape({**value, "at": when, "day": when.date(), "b": b"secret", "k": 10})
    assert shaped["v"] == [0.0] * 101
    assert shaped["text"] == "x" * 11
    assert shaped["rows"] == [{"id": "x", "n": 0}] * 11
    assert shaped["at"] == datetime(1970, 1, 1, tzinfo=UTC)
    assert shaped["day"] == date(1970, 1, 1) and shaped["b"] == b"xx" and shaped["k"] == 0
    assert shape(datetime(2023, 1, 2)).tzinfo is None  # local stays local: another type
    assert shape(None) is None and shape(True) is True and type(shape(3.5)) is float
    assert shape([]) == []


def test_kind_tells_none_values_and_list_items_apart() -> None:
    assert kind(None) != kind("a")
    assert kind([1.0]) != kind(["a"])
    assert kind([]) == (list, None)
    assert kind([[1.0]]) == (list, (list, float))


def test_one_entry_per_statement_and_parameter_types() -> None:
    w = PlanWarmer()
    w.note("A", {"space": "s1", "t": None})
    w.note("A", {"space": "s2", "t": None})
    assert len(w) == 1
    w.note("A", {"space": "s1", "t": "2024"})
    assert len(w) == 2


def test_warm_plans_the_most_run_first_with_shaped_parameters() -> None:
    w = PlanWarmer()
    w.note("rare", {"x": 1})
    for _ in range(3):
        w.note("hot", {"v": [0.1] * 10})
    seen: list[tuple[str, dict[str, object]]] = []

    def record(text: str, params: dict[str, object]) -> bool:
        seen.append((text, params))
        return True

    tried = w.warm(record, budget_s=10, workers=1)
    assert seen == [("hot", {"v": [0.0] * 2}), ("rare", {"x": 0})]
    assert [key[0] for key in tried] == ["hot", "rare"]
    # what was tried is skipped the next time (the rest planned after the breaker closed)
    seen.clear()
    assert w.warm(record, budget_s=10, skip=set(tried[:1])) == tried[1:]
    assert seen == [("rare", {"x": 0})]


def test_warm_goes_on_past_a_statement_that_does_not_plan_and_stops_at_the_budget() -> None:
    w = PlanWarmer()
    for i in range(5):
        w.note(f"s{i}", {})
    assert len(w.warm(lambda t, p: t != "s0", budget_s=10)) == 5

    def slow(text: str, params: dict[str, object]) -> bool:
        time.sleep(0.05)
        return True

    # the budget is checked before each statement: one each, then no more
    assert len(w.warm(slow, budget_s=0.01, workers=1)) == 1
    assert len(w.warm(slow, budget_s=0.01, workers=2)) == 2


def test_the_limit_bounds_what_is_remembered() -> None:
    w = PlanWarmer(limit=3)
    for i in range(10):
        w.note(f"s{i}", {})
    assert len(w) == 3
