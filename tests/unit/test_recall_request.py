"""Tests for pipelines.recall.request: the one place a recall request is validated."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from pipelines.recall.request import MAX_K, MAX_QUERY_CHARS, RecallFilters, RecallRequest


def _field(**body: object) -> str:
    with pytest.raises(ValidationError) as err:
        RecallRequest.model_validate(body)
    return ".".join(str(p) for p in err.value.errors()[0]["loc"])


def test_defaults_and_the_cleaned_query() -> None:
    r = RecallRequest(query="  What\x00 did\tAnn\n say? ")
    assert r.query == "What did Ann say?"
    assert (r.k, r.preset, r.order, r.touch, r.explain) == (10, "full", "relevance", True, False)
    assert r.filters == RecallFilters() and r.filters.exclude_ids == ()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": " \n\t "}, "query"),
        ({"query": "x" * (MAX_QUERY_CHARS + 1)}, "query"),
        ({"query": "q", "k": 0}, "k"),
        ({"query": "q", "k": MAX_K + 1}, "k"),
        ({"query": "q", "preset": "fused"}, "preset"),
        ({"query": "q", "preset": "full_no_late"}, "preset"),
        ({"query": "q", "order": "newest"}, "order"),
        ({"query": "q", "deadline_ms": 0}, "deadline_ms"),
        ({"query": "q", "session_novelty": 1.5}, "session_novelty"),
        ({"query": "q", "bogus": 1}, "bogus"),
        ({"query": "q", "filters": {"stages": []}}, "filters.stages"),
        ({"query": "q", "filters": {"nope": 1}}, "filters.nope"),
        (
            {
                "query": "q",
                "filters": {"time_from": "2023-07-01T00:00:00Z", "time_to": "2023-01-01T00:00:00"},
            },
            "filters.time_from",
        ),
    ],
)
def test_a_bad_request_names_the_field(body: dict[str, object], field: str) -> None:
    assert _field(**body) == field


def test_requests_are_frozen() -> None:
    r = RecallRequest(query="q", filters=RecallFilters(stages=["a"]))
    with pytest.raises(ValidationError):
        r.k = 5  # type: ignore[misc]
    with pytest.raises(ValidationError):
        r.filters.stages = ("b",)  # type: ignore[misc]
    assert r.filters.stages == ("a",)


def test_a_time_range_may_be_a_single_moment() -> None:
    moment = datetime(2023, 1, 1, tzinfo=UTC)
    f = RecallFilters(time_from=moment, time_to=moment)
    assert f.time_from == f.time_to == moment


def test_an_oversample_below_k_counts_as_k() -> None:
    """A rule across two fields that the OpenAPI schema cannot state: raised, not refused."""
    assert RecallRequest.model_validate({"query": "q", "k": 10, "oversample": 9}).oversample == 10
    assert RecallRequest.model_validate({"query": "q", "k": 10, "oversample": 12}).oversample == 12


def test_an_integral_float_is_an_integer_and_nothing_else_is() -> None:
    """The OpenAPI ``integer`` admits 34.0; booleans, strings and fractions stay refused."""
    assert RecallRequest.model_validate({"query": "q", "k": 34.0}).k == 34
    for bad in (True, "34", 34.5):
        with pytest.raises(ValidationError):
            RecallRequest.model_validate({"query": "q", "k": bad})


def test_a_time_is_a_string_not_a_number() -> None:
    """The schema's ``date-time`` is a string: a number of seconds is refused, naming the field."""
    for body in ({"query": "q", "now": 0}, {"query": "q", "filters": {"time_from": 1700000000}}):
        with pytest.raises(ValidationError):
            RecallRequest.model_validate(body)
