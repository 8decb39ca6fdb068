"""Tests for pipelines.recall.query.resolve_time_expressions (fixed reference time)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.recall.time_expressions import TimeConstraint, resolve_time_expressions

# Saturday 20 May 2023, 15:30 UTC
NOW = datetime(2023, 5, 20, 15, 30, tzinfo=UTC)


def d(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def only(query: str, now: datetime = NOW) -> TimeConstraint:
    constraints = resolve_time_expressions(query, now)
    assert len(constraints) == 1, constraints
    return constraints[0]


@pytest.mark.parametrize(
    ("query", "start", "end", "text"),
    [
        ("What did I do yesterday?", d(2023, 5, 19), d(2023, 5, 20), "yesterday"),
        ("Anything today?", d(2023, 5, 20), d(2023, 5, 21), "today"),
        ("the day before yesterday", d(2023, 5, 18), d(2023, 5, 19), "the day before yesterday"),
        ("What did I eat this morning?", d(2023, 5, 20), d(2023, 5, 21), "this morning"),
        # calendar periods (weeks start on Monday; 20 May 2023 is a Saturday)
        ("Who called last week?", d(2023, 5, 8), d(2023, 5, 15), "last week"),
        ("spent last month", d(2023, 4, 1), d(2023, 5, 1), "last month"),
        ("trips last year", d(2022, 1, 1), d(2023, 1, 1), "last year"),
        ("this week", d(2023, 5, 15), d(2023, 5, 22), "this week"),
        ("this month", d(2023, 5, 1), d(2023, 6, 1), "this month"),
        ("earlier this year", d(2023, 1, 1), d(2024, 1, 1), "this year"),
        ("last weekend", d(2023, 5, 13), d(2023, 5, 15), "last weekend"),
        # named months and dates
        ("What did Melanie paint last March?", d(2023, 3, 1), d(2023, 4, 1), "last March"),
        ("in May 2023", d(2023, 5, 1), d(2023, 6, 1), "in May 2023"),
        ("Melanie's May 2023 trip", d(2023, 5, 1), d(2023, 6, 1), "May 2023"),
        ("What happened in 2022?", d(2022, 1, 1), d(2023, 1, 1), "in 2022"),
        ("on 8 May 2023", d(2023, 5, 8), d(2023, 5, 9), "on 8 May 2023"),
        ("on the 8th of May, 2023", d(2023, 5, 8), d(2023, 5, 9), "on the 8th of May, 2023"),
        ("on May 8, 2023", d(2023, 5, 8), d(2023, 5, 9), "on May 8, 2023"),
        ("2023-05-08 notes", d(2023, 5, 8), d(2023, 5, 9), "2023-05-08"),
        ("on Sept 3", d(2022, 9, 3), d(2022, 9, 4), "on Sept 3"),
        ("on May 8", d(2023, 5, 8), d(2023, 5, 9), "on May 8"),
        ("in June", d(2022, 6, 1), d(2022, 7, 1), "in June"),
        ("in May", d(2023, 5, 1), d(2023, 6, 1), "in May"),
        ("during the summer of 2021", d(2021, 1, 1), d(2022, 1, 1), "of 2021"),
        # "N units ago": the calendar unit containing now − N units
        ("3 days ago", d(2023, 5, 17), d(2023, 5, 18), "3 days ago"),
        ("two weeks ago", d(2023, 5, 1), d(2023, 5, 8), "two weeks ago"),
        ("a month ago", d(2023, 4, 1), d(2023, 5, 1), "a month ago"),
        ("a few months ago", d(2023, 2, 1), d(2023, 3, 1), "a few months ago"),
        ("a couple of years ago", d(2021, 1, 1), d(2022, 1, 1), "a couple of years ago"),
        # rolling windows end now
        ("in the last 3 days", d(2023, 5, 17, 15, 30), NOW, "in the last 3 days"),
        ("over the past two weeks", d(2023, 5, 6, 15, 30), NOW, "over the past two weeks"),
        ("the past week", d(2023, 5, 13, 15, 30), NOW, "past week"),
        ("last 6 months", d(2022, 11, 20, 15, 30), NOW, "last 6 months"),
        # ranges between two expressions
        ("between March and April", d(2023, 3, 1), d(2023, 5, 1), "between March and April"),
        ("from 2020 to 2022", d(2020, 1, 1), d(2023, 1, 1), "from 2020 to 2022"),
        (
            "between 1 March 2023 and 3 March 2023",
            d(2023, 3, 1),
            d(2023, 3, 4),
            "between 1 March 2023 and 3 March 2023",
        ),
    ],
)
def test_ranges(query: str, start: datetime, end: datetime, text: str) -> None:
    constraint = only(query)
    assert (constraint.kind, constraint.start, constraint.end) == ("range", start, end)
    assert constraint.text == text
    assert not constraint.soft


@pytest.mark.parametrize(
    ("query", "kind", "start", "end"),
    [
        ("before May 2023", "before", None, d(2023, 5, 1)),
        ("prior to 2020", "before", None, d(2020, 1, 1)),
        ("until June 2022", "before", None, d(2022, 7, 1)),
        ("by 8 May 2023", "before", None, d(2023, 5, 9)),
        ("after 2022", "after", d(2023, 1, 1), None),
        ("after last week", "after", d(2023, 5, 15), None),
        ("since last week", "after", d(2023, 5, 8), None),
        ("since March", "after", d(2023, 3, 1), None),
        ("since yesterday", "after", d(2023, 5, 19), None),
        ("since 2021", "after", d(2021, 1, 1), None),
    ],
)
def test_open_constraints(
    query: str, kind: str, start: datetime | None, end: datetime | None
) -> None:
    constraint = only(query)
    assert (constraint.kind, constraint.start, constraint.end) == (kind, start, end)
    assert constraint.text == query


@pytest.mark.parametrize("word", ["recently", "lately", "these days"])
def test_recently_is_soft(word: str) -> None:
    constraint = only(f"What did Melanie paint {word}?")
    assert constraint.soft
    assert constraint.kind == "range"
    assert (constraint.start, constraint.end) == (NOW - timedelta(days=30), NOW)
    custom = resolve_time_expressions(word, NOW, recent_window=timedelta(days=7))[0]
    assert custom.start == NOW - timedelta(days=7)


@pytest.mark.parametrize(
    "query",
    [
        "When did Caroline go to the LGBTQ support group?",
        "How long has Nate had his first two turtles?",
        "May I ask what Jon said?",  # the verb "may"
        "you may want to march on",
        "I met June at the park",  # a name, not a month (no preposition)
        "She ran 2000 metres",  # a number, not a year
        "the last time we talked",
        "",
    ],
)
def test_no_time_expression(query: str) -> None:
    assert resolve_time_expressions(query, NOW) == []


def test_invalid_day_falls_back_to_the_month() -> None:
    constraint = only("on 31 February 2023")
    assert (constraint.start, constraint.end) == (d(2023, 2, 1), d(2023, 3, 1))
    assert constraint.text == "February 2023"


def test_multiple_expressions_in_query_order() -> None:
    constraints = resolve_time_expressions(
        "Did I run more last week than two weeks ago, or since 2021?", NOW
    )
    assert [c.text for c in constraints] == ["last week", "two weeks ago", "since 2021"]
    assert [c.kind for c in constraints] == ["range", "range", "after"]


def test_last_month_name_rolls_back_a_year() -> None:
    march_now = datetime(2023, 3, 10, tzinfo=UTC)
    assert only("last March", march_now).start == d(2022, 3, 1)
    assert only("in March", march_now).start == d(2023, 3, 1)
    jan_now = datetime(2023, 1, 15, tzinfo=UTC)
    assert (only("last month", jan_now).start, only("last month", jan_now).end) == (
        d(2022, 12, 1),
        d(2023, 1, 1),
    )


def test_month_arithmetic_clamps_day() -> None:
    now = datetime(2023, 3, 31, 9, 0, tzinfo=UTC)
    assert only("a month ago", now).start == d(2023, 2, 1)
    assert only("the last 1 month", now).start == d(2023, 2, 28, 9, 0)


def test_timezone_of_now_is_used() -> None:
    tz = timezone(timedelta(hours=-5))
    now = datetime(2023, 5, 20, 1, 0, tzinfo=tz)  # 06:00 UTC
    constraint = only("yesterday", now)
    assert constraint.start == datetime(2023, 5, 19, tzinfo=tz)
    assert constraint.start.tzinfo is tz and constraint.end is not None
    assert constraint.end.tzinfo is tz


def test_naive_now_gives_naive_results() -> None:
    now = datetime(2023, 5, 20, 15, 30)
    constraint = only("in May 2023", now)
    assert constraint.start == datetime(2023, 5, 1)
    assert constraint.start.tzinfo is None


def test_contains_is_half_open() -> None:
    constraint = only("yesterday")
    assert constraint.contains(d(2023, 5, 19))
    assert constraint.contains(d(2023, 5, 19, 23, 59))
    assert not constraint.contains(d(2023, 5, 20))
    before = only("before May 2023")
    assert before.contains(d(1999, 1, 1)) and not before.contains(d(2023, 5, 1))
    after = only("after 2022")
    assert after.contains(d(2030, 1, 1)) and not after.contains(d(2022, 12, 31))


@given(
    st.text(max_size=80),
    st.datetimes(min_value=datetime(1950, 1, 1), max_value=datetime(2090, 1, 1)),
)
def test_resolution_is_total_and_well_formed(query: str, naive_now: datetime) -> None:
    now = naive_now.replace(tzinfo=UTC)
    for constraint in resolve_time_expressions(query, now):
        assert constraint.text and constraint.text in query
        if constraint.kind == "range":
            assert constraint.start is not None and constraint.end is not None
            assert constraint.start < constraint.end
        elif constraint.kind == "before":
            assert constraint.start is None and constraint.end is not None
        else:
            assert constraint.start is not None and constraint.end is None


@given(
    st.sampled_from(
        [
            "yesterday",
            "last week",
            "last month",
            "last year",
            "3 days ago",
            "two weeks ago",
            "a few months ago",
            "in the last 5 days",
            "last March",
            "in June",
            "on May 8",
            "recently",
        ]
    ),
    st.datetimes(min_value=datetime(1950, 1, 1), max_value=datetime(2090, 1, 1)),
)
def test_past_expressions_never_point_to_the_future(expression: str, naive: datetime) -> None:
    now = naive.replace(tzinfo=UTC)
    constraint = only(expression, now)
    assert constraint.start is not None
    assert constraint.start <= now
