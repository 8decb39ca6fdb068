"""Speakers exported under full names or handles are found by the names people use."""

from __future__ import annotations

import pytest

from pipelines.recall.query import find_speakers, strip_speakers
from pipelines.recall.speakers import name_parts, speaker_forms


@pytest.mark.parametrize(
    ("handle", "parts"),
    [
        ("jon.snow42", ["jon", "snow"]),
        ("jon_snow", ["jon", "snow"]),
        ("JonSnow", ["Jon", "Snow"]),
        ("Jon Snow", ["Jon", "Snow"]),
        ("Zoë-Ann", ["Zoë", "Ann"]),
        ("+1 555 0100", []),
    ],
)
def test_name_parts(handle: str, parts: list[str]) -> None:
    assert name_parts(handle) == parts


def test_single_word_speakers_keep_exactly_their_names() -> None:
    # LoCoMo's and BEAM's exports: nothing changes for them
    assert speaker_forms(["Caroline", "Melanie"]) == {"caroline": "Caroline", "melanie": "Melanie"}
    assert speaker_forms(["user", "assistant"]) == {"user": "user", "assistant": "assistant"}


def test_full_names_and_handles_are_found_by_the_given_name() -> None:
    speakers = ["Jon Snow", "caroline_92", "melanie.rivera"]
    query = "What did Jon tell Caroline about Melanie's trip?"
    assert find_speakers(query, speakers) == ["Jon Snow", "caroline_92", "melanie.rivera"]
    assert find_speakers("What did melanie rivera say?", speakers) == ["melanie.rivera"]


def test_a_given_name_two_speakers_share_names_neither() -> None:
    assert find_speakers("What did Jon say?", ["Jon Snow", "jon.arryn"]) == []
    assert find_speakers("What did Jon Snow say?", ["Jon Snow", "jon.arryn"]) == ["Jon Snow"]


def test_an_alias_followed_by_another_capitalised_name_is_someone_else() -> None:
    assert find_speakers("What did Jon Arryn say?", ["Jon Snow", "Melanie"]) == []
    assert find_speakers("Did Jon visit Paris?", ["Jon Snow"]) == ["Jon Snow"]


def test_an_alias_is_only_an_alias_among_all_the_speakers() -> None:
    # the used speaker alone would make "Jon" its alias; the space's speakers do not
    q = "What did Jon Snow ask Jon?"
    assert strip_speakers(q, ["Jon Snow"], ["Jon Snow", "jon.arryn"]) == "What did ask Jon?"
    assert strip_speakers("What did Jon say about camping?", ["Jon Snow"]) == (
        "What did say about camping?"
    )


def test_role_words_and_titles_are_no_aliases() -> None:
    forms = speaker_forms(["the_user", "Dr. Smith"])
    assert "the" not in forms and "dr" not in forms
    assert forms["smith"] == "Dr. Smith"
