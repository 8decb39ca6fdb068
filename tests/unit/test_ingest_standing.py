"""Standing instructions and preferences (pipelines.ingest.standing): positive and negative
examples, and the supersession rule (with hand-made vectors; calibration against the real
model is in tests/integration/test_write_graph.py)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from pipelines.ingest.standing import Standing, extract_standing, supersedes
from pipelines.models.nlp import load_nlp

USER = frozenset({"user"})


@functools.cache
def nlp() -> Any:
    return load_nlp()[0]


def got(text: str, role: str = "user") -> list[tuple[str, str]]:
    return [(s.category, s.text) for s in extract_standing(text, role, USER, nlp())]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Always format all code snippets with syntax highlighting when I ask about it.",
            [("instruction", "Always format all code snippets with syntax highlighting when I "
              "ask about it")],
        ),
        ("Please always include type hints.", [("instruction", "Always include type hints")]),
        ("Never use semicolons in JS.", [("instruction", "Never use semicolons in JS")]),
        ("Don't add comments to the code.", [("instruction", "Don't add comments to the code")]),
        ("From now on, answer in French.", [("instruction", "From now on, answer in French")]),
        ("Use tabs everywhere from now on.", [("instruction", "Use tabs everywhere from now on")]),
        ("Make sure to always cite sources.",
         [("instruction", "Make sure to always cite sources")]),
        ("I want you to be brief.", [("instruction", "I want you to be brief")]),
        (
            'Always format dates as "Month Day, Year" in timelines.',
            [("instruction", 'Always format dates as "Month Day, Year" in timelines')],
        ),
        ("I prefer SQLite for now.", [("preference", "I prefer SQLite for now")]),
        ("I'd rather use Flask than Django.", [("preference", "I'd rather use Flask than Django")]),
        ("We prefer short meetings.", [("preference", "We prefer short meetings")]),
        ("I always use tabs.", [("preference", "I always use tabs")]),
        (
            "I'm trying to keep my app small, so I prefer simple, minimal dependencies, how can I "
            "keep it that way",
            [("preference", "I prefer simple, minimal dependencies")],
        ),
        (
            "Hello! Always include version numbers. I prefer Bootstrap over Foundation because "
            "of its docs.",
            [("instruction", "Always include version numbers"),
             ("preference", "I prefer Bootstrap over Foundation")],
        ),
    ],
)  # fmt: skip
def test_positive_examples(text: str, expected: list[tuple[str, str]]) -> None:
    assert got(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Should I always use HTTPS?",  # a question
        "Can you always include examples?",
        "Do you prefer tabs or spaces?",
        "Would I prefer Postgres here?",
        'My boss always says "never give up".',  # quoted or reported speech
        '"Always be closing" is my motto.',
        "He always forgets his keys.",  # third person
        "My wife prefers tea.",
        "Don't worry about it.",  # feelings, not behaviour
        "Don't forget the milk.",
        "Never mind.",
        "I never thought it would work.",
        "If I prefer tabs, what then?",
        "Use the second option.",  # a one-off request
        "Keep going.",
        "```\n# always use tabs\nprint('never')\n```",  # code is not an instruction
        "",
    ],
)
def test_negative_examples(text: str) -> None:
    assert got(text) == []


def test_only_user_turns() -> None:
    text = "Always use tabs. I prefer SQLite."
    assert got(text, "assistant") == [] and got(text, "system") == [] and got(text, "note") == []
    assert len(got(text, "User")) == 2  # roles compare case-insensitively


def test_change_and_polarity() -> None:
    (old,) = extract_standing("I prefer SQLite for now.", "user", USER, nlp())
    (new,) = extract_standing("I prefer PostgreSQL now.", "user", USER, nlp())
    assert not old.change and new.change  # "for now" is not a change, "now" is
    (neg,) = extract_standing("Never include type hints.", "user", USER, nlp())
    assert neg.negated and not old.negated
    # a purpose clause says why, not what: its negation does not flip the statement
    (why,) = extract_standing(
        "I prefer addressing patent office actions within 10 days to avoid delays.",
        "user",
        USER,
        nlp(),
    )
    (so,) = extract_standing("I prefer writing things down so I don't forget.", "user", USER, nlp())
    assert not why.negated and not so.negated
    (avoid,) = extract_standing("Avoid global variables in every example.", "user", USER, nlp())
    assert avoid.negated


def _s(text: str, change: bool = False, negated: bool = False) -> Standing:
    return Standing("preference", text, "prefer", 0.8, change, negated)


def _v(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_supersession_rule() -> None:
    sqlite = (_s("I prefer SQLite for now"), _v(1, 0, 0))
    tabs = (_s("I prefer tabs"), _v(0, 1, 0))
    active = [sqlite, tabs]
    # a change, close enough to the SQLite preference: retires it
    assert (
        supersedes(_s("I prefer PostgreSQL now", change=True), _v(1, 0.9, 0), active, 0.85, 0.42)
        == 0
    )
    # the same closeness without a change marker: both stand
    assert supersedes(_s("I prefer PostgreSQL"), _v(1, 0.9, 0), active, 0.85, 0.42) is None
    # a restatement (very close) retires the older wording
    assert supersedes(_s("I prefer tabs always"), _v(0.1, 1, 0), active, 0.85, 0.42) == 1
    # a polarity flip counts as a change
    assert (
        supersedes(_s("I never prefer tabs", negated=True), _v(0.5, 1, 0), active, 0.85, 0.42) == 1
    )
    # unrelated: nothing
    assert supersedes(_s("I prefer tea now", change=True), _v(0, 0, 1), active, 0.85, 0.42) is None
    # another category is never compared
    instr = Standing("instruction", "Always use tabs", "imperative", 0.8, True, False)
    assert supersedes(instr, _v(0, 1, 0), active, 0.85, 0.42) is None
    assert supersedes(_s("x"), _v(1, 0, 0), [], 0.85, 0.42) is None
    # the same statement again (normalised text equal) retires nothing, however close
    assert supersedes(_s("i prefer TABS!", change=True), _v(0, 1, 0), active, 0.85, 0.42) is None


def test_a_statement_before_a_question_counts() -> None:
    out = extract_standing(
        "I'm kinda stressed about our budget, and I prefer using Excel for control, so can you "
        "help me make it work?",
        "user",
        USER,
        nlp(),
    )
    assert [(s.category, s.text) for s in out] == [
        ("preference", "I prefer using Excel for control")
    ]
    assert extract_standing("Should I always use HTTPS?", "user", USER, nlp()) == []


def test_the_condition_of_a_standing_statement() -> None:
    (s,) = extract_standing(
        "Always format dates in MM/DD/YYYY when I ask about scheduling details.",
        "user",
        USER,
        nlp(),
    )
    assert s.condition == "scheduling details"
    (t,) = extract_standing(
        "Always include tests when discussing new endpoints.", "user", USER, nlp()
    )
    assert t.condition == "new endpoints"
    (u,) = extract_standing("Always include type hints.", "user", USER, nlp())
    assert u.condition is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Don't schedule anything before 9 for me.",
         [("instruction", "Don't schedule anything before 9 for me")]),
        ("Never send me summaries longer than a page.",
         [("instruction", "Never send me summaries longer than a page")]),
        ("Make sure to always show units whenever we compare prices.",
         [("instruction", "Make sure to always show units whenever we compare prices")]),
        ("I prefer spreadsheets for budgets.",
         [("preference", "I prefer spreadsheets for budgets")]),
        ("I switched to a new laptop since I prefer its keyboard.",
         [("preference", "I switched to a new laptop since I prefer its keyboard")]),
        ("I prefer short answers, and I've already read the long guide twice.",
         [("preference", "I prefer short answers")]),
    ],
)  # fmt: skip
def test_rules_the_grammar_keeps(text: str, expected: list[tuple[str, str]]) -> None:
    assert got(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Don't give up, you'll get there!",  # encouragement
        "Never lose hope!",
        "Don't let the setbacks stop you.",  # advice about the listener's own life
        "Don't be afraid to ask for help.",
        "Always believe in your plans.",
        "Never had the time to visit it.",  # narration with the subject dropped
        "Never tried sushi before.",
        "Always happy to lend a hand.",  # boilerplate without a verb
        "Always a pleasure talking to you.",
        "Be sure to call your mom.",  # a one-off request
        "In the future, I'm hoping to travel more.",  # a plan, not a rule for the listener
        "I always feel calm by the sea.",  # feelings and narrated habits
        "I never asked him about that.",
        "We always go to the market on Sundays.",
        "I'd rather show you the photo.",  # an offer in the moment
        "I'd love some help with the options like I prefer.",  # no object: under "like"
        "I prefer its colour.",  # nothing to say what "its" is
    ],
)
def test_what_the_grammar_rejects(text: str) -> None:
    assert got(text) == []


def test_the_condition_comes_from_the_parse() -> None:
    (s,) = extract_standing("Always show the unit when we discuss prices.", "user", USER, nlp())
    assert s.condition == "prices"
    (t,) = extract_standing("Never round numbers if I ask for totals.", "user", USER, nlp())
    assert t.condition == "totals"
