"""Echoes (pure): which turns only restate the query, which replies answer, and the ranking
with each answer in its echo's place."""

from __future__ import annotations

from pipelines.recall.steps.echoes import content_stems, is_answer, is_echo, promote_answers

_CFG = {"min_question_share": 0.6, "min_query_share": 0.5, "max_other_words": 3}


def test_a_question_in_the_querys_words_is_an_echo() -> None:
    query = content_stems("where does the user live?")
    assert content_stems("Where do I live now?") == {"liv"} <= query
    assert is_echo("Where do I live now?", query, **_CFG)
    assert is_echo("Oh nice! Where are you living now?", query, **_CFG)


def test_a_turn_that_says_something_or_asks_something_else_is_no_echo() -> None:
    query = content_stems("where does the user live?")
    assert not is_echo("I moved to Porto.", query, **_CFG)  # no question
    assert not is_echo("Did you like the concert last night?", query, **_CFG)  # other words
    long = "I moved to Porto last spring with my sister and our two cats. Where do you live?"
    assert not is_echo(long, query, **_CFG)  # says much besides asking
    assert not is_echo("Where do I live now?", set(), **_CFG)


def test_speaker_names_do_not_count_as_content() -> None:
    names = frozenset({"caroline", "melanie"})
    query = content_stems("What did Caroline research?", names)
    assert query == {"research"}
    assert is_echo("Caroline, what did you research?", query, ignore=names, **_CFG)


def test_an_answer_says_something() -> None:
    assert is_answer("I moved to Porto.")
    assert is_answer("Porto! Why do you ask?")
    assert not is_answer("Why do you ask?")


def test_the_answer_takes_the_echos_place_and_the_echo_follows() -> None:
    ranking = [("echo", 1.3), ("a", 1.1), ("answer", 0.9), ("b", 0.5)]
    out = promote_answers(ranking, {"echo": "answer"})
    assert [i for i, _ in out] == ["answer", "echo", "a", "b"]
    scores = dict(out)
    assert scores["answer"] == 1.3 and 1.1 < scores["echo"] < 1.3
    assert [s for _, s in out] == sorted((s for _, s in out), reverse=True)


def test_an_answer_from_outside_the_ranking_is_added_and_one_above_is_left_alone() -> None:
    out = promote_answers([("a", 2.0), ("echo", 1.0)], {"echo": "new"})
    assert [i for i, _ in out] == ["a", "new", "echo"]
    ranking = [("answer", 2.0), ("echo", 1.0)]
    assert promote_answers(ranking, {"echo": "answer"}) == ranking
    # Two echoes with the same answer: the better echo places it.
    out = promote_answers([("e1", 3.0), ("e2", 2.0), ("x", 1.0)], {"e1": "x", "e2": "x"})
    assert [i for i, _ in out] == ["x", "e1", "e2"]
