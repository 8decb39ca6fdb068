"""Tests for pipelines.recall.intent."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.language.intents import RULES
from pipelines.recall.intent import INTENT_PRIORITY, Intent, classify_intent


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # LoCoMo-style conversational questions
        ("When did Caroline go to the LGBTQ support group?", Intent.TEMPORAL),
        ("What did Melanie paint recently?", Intent.TEMPORAL),
        ("How long has Nate had his first two turtles?", Intent.TEMPORAL),
        ("What year did Jon open his dance studio?", Intent.TEMPORAL),
        ("Would Caroline pursue writing as a career option?", Intent.PREFERENCE),
        ("What is Caroline's identity?", Intent.ENTITY),
        ("Who is Gina?", Intent.ENTITY),
        ("What do Jon and Gina both have in common?", Intent.MULTI_HOP),
        ("Why did Gina decide to start her own clothing store?", Intent.CAUSAL),
        ("What made Melanie take up pottery?", Intent.CAUSAL),
        # knowledge update
        ("What's my current job title?", Intent.KNOWLEDGE_UPDATE),
        ("What is the latest address I gave you?", Intent.KNOWLEDGE_UPDATE),
        ("Do I still live in Berlin?", Intent.KNOWLEDGE_UPDATE),
        # event order
        ("What order did I visit the three cities in?", Intent.EVENT_ORDER),
        ("I first adopted a cat, then what pet did I get?", Intent.EVENT_ORDER),
        ("Which happened first, the move or the wedding?", Intent.EVENT_ORDER),
        ("Did Caroline go to the park before the concert?", Intent.EVENT_ORDER),
        # summarization
        ("Summarize what we discussed about the garden", Intent.SUMMARIZATION),
        ("Give me a recap of my fitness goals", Intent.SUMMARIZATION),
        # preference
        ("Does the user prefer tea or coffee?", Intent.PREFERENCE),
        ("What is my favorite restaurant?", Intent.PREFERENCE),
        # instruction
        ("Always respond in French.", Intent.INSTRUCTION),
        ("never use emojis when you reply", Intent.INSTRUCTION),
        ("How should you format answers for me?", Intent.INSTRUCTION),
        # fallback
        ("Where does Caroline live?", Intent.SEMANTIC),
        ("pottery glaze techniques", Intent.SEMANTIC),
        ("", Intent.SEMANTIC),
    ],
)
def test_classify_intent_examples(query: str, expected: Intent) -> None:
    assert classify_intent(query).intent == expected


def test_result_explains_itself() -> None:
    result = classify_intent("When did Caroline go to the support group?")
    assert result.matched_rules == ("when_question",)
    assert result.scores[Intent.TEMPORAL] == 2.0
    assert set(result.scores) == set(Intent)
    assert all(score == 0.0 for i, score in result.scores.items() if i != Intent.TEMPORAL)


def test_strongest_evidence_wins_over_weak_time_hint() -> None:
    result = classify_intent("Why did Caroline go to the support group last week?")
    assert result.intent == Intent.CAUSAL
    assert result.scores[Intent.TEMPORAL] > 0  # the time hint is still reported


def test_ties_follow_priority_order() -> None:
    result = classify_intent("Why did it change?")
    assert result.scores[Intent.CAUSAL] == 2.0
    assert result.scores[Intent.KNOWLEDGE_UPDATE] == 1.0
    assert result.intent == Intent.CAUSAL
    tied = classify_intent("reasons still")
    assert tied.scores[Intent.CAUSAL] == tied.scores[Intent.KNOWLEDGE_UPDATE] == 1.0
    assert tied.intent == Intent.KNOWLEDGE_UPDATE  # earlier in INTENT_PRIORITY


def test_date_after_is_temporal_not_event_order() -> None:
    assert classify_intent("What did Melanie do after May 2023?").intent == Intent.TEMPORAL


def test_contraction_is_not_a_possessive() -> None:
    result = classify_intent("What's the plan?")
    assert "possessive_name" not in result.matched_rules
    assert result.intent == Intent.SEMANTIC


def test_priority_covers_every_intent_once() -> None:
    assert sorted(INTENT_PRIORITY) == sorted(Intent)
    assert INTENT_PRIORITY[-1] == Intent.SEMANTIC
    assert len({rule.name for rule in RULES}) == len(RULES)


@given(st.text(max_size=200))
def test_classification_is_total_and_deterministic(query: str) -> None:
    first = classify_intent(query)
    assert first == classify_intent(query)
    assert first.intent in Intent
    best = max(first.scores.values())
    assert first.scores[first.intent] == best
    assert (best == 0.0) == (first.matched_rules == ())
