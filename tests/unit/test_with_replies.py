"""``with_replies``: the reply to each of the first results comes right after it."""

from __future__ import annotations

from pipelines.recall.steps.replies import with_replies


def test_each_request_among_the_first_is_followed_by_its_reply() -> None:
    results = ["q1", "x", "q2", "y", "z"]
    replies = {"q1": "a1", "q2": "a2", "z": "az"}
    assert with_replies(results, replies, 3, 10) == ["q1", "a1", "x", "q2", "a2", "y", "z"]


def test_only_the_first_requests_bring_theirs_and_the_list_keeps_k() -> None:
    results = ["q1", "x", "q2", "y"]
    replies = {"q1": "a1", "q2": "a2"}
    assert with_replies(results, replies, 1, 4) == ["q1", "a1", "x", "q2"]


def test_a_reply_further_down_moves_up_and_is_not_repeated() -> None:
    results = ["q1", "x", "y", "a1"]
    assert with_replies(results, {"q1": "a1"}, 2, 4) == ["q1", "a1", "x", "y"]


def test_a_reply_already_among_the_first_stays_once() -> None:
    results = ["a1", "q1", "x"]
    assert with_replies(results, {"q1": "a1"}, 2, 3) == ["a1", "q1", "x"]
    assert with_replies(["q1", "a1", "x"], {"q1": "a1"}, 2, 3) == ["q1", "a1", "x"]


def test_nothing_to_add_keeps_the_results() -> None:
    assert with_replies(["a", "b", "c"], {}, 3, 2) == ["a", "b"]
    assert with_replies([], {"q": "a"}, 3, 10) == []
