"""Tests for pipelines.ingest.facts (deterministic atomic fact extraction)."""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.ingest.config import FactConfig
from pipelines.ingest.facts import FACT_CATEGORIES, AtomicFact, extract_facts, split_clauses
from pipelines.models.nlp import load_nlp


def _pairs(text: str, role: str = "user") -> list[tuple[str, str]]:
    return [(f.category, f.text) for f in extract_facts(text, role, "Caroline")]


def test_locomo_style_line_yields_one_clause_fact() -> None:
    facts = extract_facts(
        "I went to a LGBTQ support group yesterday and it was so powerful.", "user", "Caroline"
    )
    assert facts == [
        AtomicFact(
            category="fact",
            text="I went to a LGBTQ support group yesterday",
            speaker="Caroline",
            role="user",
            confidence=0.6,
            rule="first-person-anchored",
        )
    ]


def test_greetings_small_talk_and_questions() -> None:
    text = (
        "Hey Caroline! Good to see you! I'm swamped with the kids & work. "
        "What's up with you? Anything new? How are you?"
    )
    assert _pairs(text) == [("question", "What's up with you?"), ("question", "Anything new?")]


def test_hedges_become_provisional_and_preferences_are_found() -> None:
    text = (
        "Hi Mel, thanks for asking. I'm thinking about going into counseling. "
        "My favourite book is Becoming by Michelle Obama."
    )
    assert _pairs(text) == [
        ("provisional", "I'm thinking about going into counseling"),
        ("preference", "My favourite book is Becoming by Michelle Obama"),
    ]


def test_decisions_on_user_turns() -> None:
    text = (
        "We decided to use Neo4j for the graph; let's use FastAPI for the server. "
        "I'll go with Python 3.11 because it is the newest one we support."
    )
    facts = extract_facts(text, "User", None)
    assert [(f.category, f.text, f.rule) for f in facts] == [
        ("decision", "We decided to use Neo4j for the graph", "decided"),
        ("decision", "Let's use FastAPI for the server", "lets"),
        ("decision", "I'll go with Python 3.11", "going-with"),
    ]
    assert all(f.role == "user" and f.speaker is None for f in facts)
    assert facts[0].confidence > facts[1].confidence


def test_decisions_are_never_credited_to_the_assistant() -> None:
    text = "Let's use Neo4j for the graph. We decided to go with Postgres for billing."
    assistant = extract_facts(text, "assistant", "Claude")
    assert {f.category for f in assistant} == {"provisional"}
    assert all(f.rule == "decision-not-user" for f in assistant)
    assert all(f.confidence < 0.5 for f in assistant)
    dropped = extract_facts(
        text, "assistant", None, config=FactConfig(assistant_decisions_as_provisional=False)
    )
    assert dropped == []
    tool = extract_facts(text, "tool", None)
    assert "decision" not in {f.category for f in tool}


def test_custom_user_roles() -> None:
    cfg = FactConfig(user_roles=["speaker_a"])
    assert extract_facts("We decided to move to Lisbon.", "Speaker_A", config=cfg)[0].category == (
        "decision"
    )
    assert extract_facts("We decided to move to Lisbon.", "user", config=cfg)[0].category == (
        "provisional"
    )


def test_constraints_but_not_feelings() -> None:
    text = (
        "Never commit secrets to the repo. I can't eat gluten. I don't know, lol. "
        "I can't wait to see it! Passwords must be hashed with argon2."
    )
    assert _pairs(text) == [
        ("constraint", "Never commit secrets to the repo"),
        ("constraint", "I can't eat gluten"),
        ("constraint", "Passwords must be hashed with argon2"),
    ]


def test_action_items_and_preferences() -> None:
    text = (
        "TODO: write the migration. Remember to email Bob on Friday. "
        "I prefer dark mode and I hate tabs. I need to renew my passport before June."
    )
    assert _pairs(text) == [
        ("action_item", "TODO: write the migration"),
        ("action_item", "Remember to email Bob on Friday"),
        ("preference", "I prefer dark mode"),
        ("preference", "I hate tabs"),
        ("action_item", "I need to renew my passport before June"),
    ]


def test_hedged_decisions_and_questions() -> None:
    text = (
        "Maybe we should switch to Postgres. I might go with Rust instead. "
        "Should we use Postgres or Neo4j?"
    )
    assert _pairs(text) == [
        ("provisional", "Maybe we should switch to Postgres"),
        ("provisional", "I might go with Rust instead"),
        ("question", "Should we use Postgres or Neo4j?"),
    ]


def test_first_person_facts_need_an_anchor() -> None:
    text = (
        "My sister Emma lives in Boston with her husband. I have two kids, 5 and 8 years old. "
        "It was nice. I feel good."
    )
    assert _pairs(text) == [
        ("fact", "My sister Emma lives in Boston with her husband"),
        ("fact", "I have two kids, 5 and 8 years old"),
    ]


def test_known_entities_anchor_lowercase_mentions() -> None:
    text = "we finally visited the louvre with the whole family"
    assert extract_facts(text, "user") == []
    facts = extract_facts(text, "user", entities=["Louvre"])
    assert [(f.category, f.rule) for f in facts] == [("fact", "first-person-entity")]


def test_units_are_bounded_and_deduplicated() -> None:
    long_line = (
        "So, anyway, I've been running every morning since March with my friend Ana in the "
        "big green park near the old river bridge after work on almost every single weekday."
    )
    [fact] = extract_facts(long_line, "user")
    assert fact.text.startswith("I've been running every morning since March")
    assert fact.text.endswith("…")
    assert len(fact.text.rstrip("…").split()) == 25
    repeated = extract_facts("I love jazz. I love jazz! i LOVE jazz.", "user")
    assert [f.text for f in repeated] == ["I love jazz"]


def test_code_blocks_are_not_mined() -> None:
    text = "Here's the code:\n```python\n# I will never do this\nx = 1\n```\nDone. How are you?"
    assert extract_facts(text, "assistant") == []


def test_disabled_and_empty() -> None:
    assert extract_facts("", "user") == []
    assert extract_facts("I love jazz.", "user", config=FactConfig(enabled=False)) == []


def test_max_facts_per_text() -> None:
    text = " ".join(f"I love band number {i}." for i in range(10))
    assert len(extract_facts(text, "user", config=FactConfig(max_facts_per_text=3))) == 3


@pytest.mark.parametrize(
    ("sentence", "clauses"),
    [
        ("I like cats and dogs.", ["I like cats and dogs."]),
        ("I went there and it was great.", ["I went there", "it was great."]),
        ("We chose Neo4j because it has GDS; done.", ["We chose Neo4j", "it has GDS", "done."]),
        ("Did you go, and was it fun?", ["Did you go, and was it fun?"]),
    ],
)
def test_split_clauses(sentence: str, clauses: list[str]) -> None:
    assert split_clauses(sentence) == clauses


@given(st.text(max_size=300), st.sampled_from(["user", "assistant", "tool"]))
def test_extraction_invariants(text: str, role: str) -> None:
    facts = extract_facts(text, role, "s")
    cfg = FactConfig()
    for fact in facts:
        assert fact.category in FACT_CATEGORIES
        assert 0.0 <= fact.confidence <= 1.0
        assert fact.text and fact.text == fact.text.strip()
        assert len(fact.text.split()) <= cfg.max_words
        if role != "user":
            assert fact.category != "decision"
    assert facts == extract_facts(text, role, "s")  # deterministic


@functools.cache
def _nlp() -> Any:
    return load_nlp()[0]


def _alone(text: str, role: str = "user") -> list[tuple[str, str]]:
    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    facts = extract_facts(text, role, "Dana", nlp=_nlp(), when=when)
    return [(f.category, f.text) for f in facts]


def test_fragments_are_not_facts() -> None:
    # a noun phrase and a dependent clause mean nothing without the turn they answer
    assert _alone("My cousins in Lisbon!") == []
    assert _alone("Since I was 12 or so.") == []
    assert _alone("Because my team in Oslo asked.") == []


def test_a_dependent_clause_takes_its_sentence_or_goes() -> None:
    # "I was 12" is cut from a sentence whose main clause is a fact already: it goes
    assert _alone("I have played chess with my dad since I was 12.") == [
        ("fact", "I have played chess with my dad")
    ]
    assert _alone("I was 12, though I remember Porto well.") == [("fact", "I remember Porto well")]


def test_a_relative_time_gets_the_turns_date() -> None:
    assert _alone("I adopted a puppy from the Porto shelter yesterday.") == [
        ("fact", "I adopted a puppy from the Porto shelter yesterday (8 May 2023)")
    ]
    assert _alone("We drove to Berlin last weekend.") == [
        ("fact", "We drove to Berlin last weekend (8 May 2023)")
    ]
    # no relative time: no date
    assert _alone("I moved to Porto in 2021.") == [("fact", "I moved to Porto in 2021")]


def test_questions_stay_questions_and_are_never_embedded() -> None:
    assert _alone("What did you do in Porto?") == [("question", "What did you do in Porto?")]
    assert "question" not in FactConfig().embedded_categories


def test_no_fact_under_four_words_with_the_parser() -> None:
    text = "My kids! Me in 2020. I love Porto. I'll do that. I went to Porto in May. Since 2019."
    assert all(len(t.split()) >= 4 for c, t in _alone(text) if c != "question")
