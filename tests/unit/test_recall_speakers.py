"""Speakers exported under full names or handles are found by the names people use."""

from __future__ import annotations

import pytest

from pipelines.recall.query import find_speakers, strip_speakers
from pipelines.recall.speakers import addressed_name, learned_names, name_parts, speaker_forms


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
    forms = speaker_forms(["Jon Snow", "jon.arryn"])
    assert strip_speakers(q, ["Jon Snow"], forms) == "What did ask Jon?"
    assert strip_speakers("What did Jon say about camping?", ["Jon Snow"]) == (
        "What did say about camping?"
    )


def test_role_words_and_titles_are_no_aliases() -> None:
    forms = speaker_forms(["the_user", "Dr. Smith"])
    assert "the" not in forms and "dr" not in forms
    assert forms["smith"] == "Dr. Smith"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Hey Mel! How are you?", "Mel"),
        ("Hi Caroline, long time no see", "Caroline"),
        ("Thanks, Melanie!", "Melanie"),
        ("Thank you so much Caroline!", "Caroline"),
        ("Wow, Zoë!", "Zoë"),
        ("hey mel", None),  # a name is capitalised
        ("Hi I am back", None),
        ("Hey Jon Arryn!", None),  # a full name may be a third person's
        ("Hello!", None),
        ("Hey there!", None),
        ("I told Mel hi", None),  # only an opening addresses
        ("Wow! That was great", None),  # a new sentence, not a name
        ("Thanks! It went well.", None),
        ("Hey Jon how are you", None),  # a name ends its phrase
        ("Hey, Mel", "Mel"),
    ],
)
def test_addressed_name(text: str, name: str | None) -> None:
    assert addressed_name(text) == name


def test_names_are_learned_from_two_person_sessions_only() -> None:
    two = ["+1 555 0100", "+1 555 0199"]
    openings = [
        (two, "+1 555 0100", "Hey Mel! How was the trip?"),
        (two, "+1 555 0100", "Thanks, Mel!"),
        (two, "+1 555 0199", "Hi Caroline, it was great"),
        (two, "+1 555 0199", "Hi Caroline!"),
        ([*two, "+1 555 0123"], "+1 555 0199", "Hey Caroline!"),  # three people: no lesson
        (two, "+1 555 0199", "Hey Bob!"),  # once is no evidence
    ]
    learned = learned_names(openings)
    assert learned == {"mel": "+1 555 0199", "caroline": "+1 555 0100"}
    forms = speaker_forms(two, learned)
    assert find_speakers("What did Caroline tell Mel about the trip?", two, forms) == two


def test_a_name_used_for_two_speakers_is_learned_for_neither_unless_one_dominates() -> None:
    ab, ac = ["A", "B"], ["A", "C"]
    split = [(ab, "A", "Hey Sam!")] * 2 + [(ac, "A", "Hey Sam!")] * 2
    assert learned_names(split) == {}
    mostly = [(ab, "A", "Hey Sam!")] * 6 + [(ac, "A", "Hey Sam!")]
    assert learned_names(mostly) == {"sam": "B"}
    assert learned_names(mostly, min_share=0.9) == {}  # 6 of 7 is not 90 %
    assert learned_names(mostly, min_addresses=7) == {}


def test_a_learned_name_never_takes_a_speakers_own_name() -> None:
    forms = speaker_forms(["Caroline", "Melanie"], {"caroline": "Melanie", "mel": "Melanie"})
    assert forms["caroline"] == "Caroline" and forms["mel"] == "Melanie"


def test_a_given_name_is_an_alias_from_the_configured_length() -> None:
    assert speaker_forms(["Al Gore"])["al gore"] == "Al Gore"
    assert "al" not in speaker_forms(["Al Gore"])  # shorter than 3 characters
    assert speaker_forms(["Al Gore"], min_alias_chars=2)["al"] == "Al Gore"
