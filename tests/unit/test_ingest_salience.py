"""Salience (spaCy and word lists): social talk is told from what a turn says."""

from __future__ import annotations

import pytest

from pipelines.ingest.salience import (
    analyse,
    is_name,
    is_phatic_sentence,
    lexical_sentence_info,
    name_forms,
)
from pipelines.models.nlp import load_nlp

NAMES = ("Caroline", "Melanie")


@pytest.fixture(scope="module")
def nlp():
    model, status = load_nlp()
    assert status.ready, status.detail
    return model


def test_greetings_thanks_and_bare_reactions_are_phatic(nlp) -> None:
    texts = ["Hey Melanie! Long time no talk!", "Congrats, Caroline!", "Thanks, Mel.",
             "Wow! Sounds lovely."]  # fmt: skip
    assert [s.phatic for s in analyse(nlp, texts, NAMES)] == [True, True, True, True]


def test_what_is_said_after_the_social_opening_is_kept(nlp) -> None:
    thanks, lead, news = analyse(
        nlp,
        [
            "Thanks, Caroline! Family time matters to me.",
            "Thanks for the tips on pottery, I will try them this weekend.",
            "Hey Caroline, I ran a charity race for mental health last Saturday!",
        ],
        NAMES,
    )
    assert thanks.text() == "Family time matters to me."
    assert lead.text() == "I will try them this weekend."
    assert news.best() == "I ran a charity race for mental health last Saturday!"
    assert news.score > lead.score > 0


def test_entities_and_dates_weigh_more_than_reactions(nlp) -> None:
    rich, poor = analyse(
        nlp, ["I went to an LGBTQ support group in Boston on 7 May 2023.", "That is great."], NAMES
    )
    assert rich.score >= 4 and poor.phatic


def test_names_and_their_short_forms() -> None:
    forms = name_forms(["Caroline Smith", "Melanie"])
    assert {"caroline", "smith", "melanie"} <= forms
    assert is_name("mel", forms) and is_name("caro", forms) and is_name("mell", forms)
    assert not is_name("guitar", forms) and not is_name("me", forms)


def test_the_word_list_reading_agrees_on_the_plain_cases() -> None:
    forms = name_forms(NAMES)
    assert is_phatic_sentence("Wow, Caroline!", forms)
    assert is_phatic_sentence("Thanks, Mel.", forms)
    assert not is_phatic_sentence("I adopted a puppy from the shelter in May.", forms)
    assert not is_phatic_sentence("Thanks for the pottery class on 12 June in Boston", forms)
    assert lexical_sentence_info("I adopted a puppy in 2023.") > lexical_sentence_info("So cool!")
