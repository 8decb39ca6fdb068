"""The sentence a compact record keeps: the query's terms first, then what it says; never
only social talk while another sentence says something."""

from __future__ import annotations

import pytest

from pipelines.ingest.condense import informative_sentence, without_social_opening
from pipelines.ingest.salience import name_forms
from pipelines.ingest.text import split_sentences

NAMES = name_forms(["Caroline", "Melanie"])


def test_a_turn_that_opens_socially_shows_what_it_says() -> None:
    text = "Wow, Caroline! That's so cool. I signed up for a pottery class in Boston yesterday."
    n, sentence = informative_sentence(split_sentences(text), (), NAMES)
    assert (n, sentence) == (2, "I signed up for a pottery class in Boston yesterday.")


def test_the_querys_terms_still_decide_first() -> None:
    text = "I painted a sunset last week. Thanks, Mel! The lake trip was in July."
    assert informative_sentence(split_sentences(text), ("lake",), NAMES)[0] == 2
    assert informative_sentence(split_sentences(text), ("sunset",), NAMES)[0] == 0


def test_the_social_opening_clause_is_dropped() -> None:
    assert (
        without_social_opening("Hey Caroline, I ran a charity race last Saturday!", NAMES)
        == "I ran a charity race last Saturday!"
    )
    assert (
        without_social_opening("Wow, Mel! Your pottery bowl looks amazing in blue", NAMES)
        == "Your pottery bowl looks amazing in blue"
    )
    # a thank-you that says what for keeps it; social talk alone stays as it is
    kept = "Thanks for the Boston pottery tips, I'll try them"
    assert without_social_opening(kept, NAMES) == kept
    assert without_social_opening("Thanks, Mel!", NAMES) == "Thanks, Mel!"


def test_only_social_talk_keeps_the_earliest() -> None:
    assert informative_sentence(["Hey Mel!", "Thanks!"], (), NAMES) == (0, "Hey Mel!")
    with pytest.raises(ValueError):
        informative_sentence([], (), NAMES)


def test_without_the_speakers_names_a_vocative_still_says_nothing() -> None:
    sentences = ["Wow, Caroline!", "Thanks, Mel.", "The adoption interview is on 3 May."]
    assert informative_sentence(sentences, ()) == (2, "The adoption interview is on 3 May.")
