"""Alias evidence for entity merges (pipelines.consolidate.entity_aliases), pure."""

from __future__ import annotations

from pipelines.consolidate.entity_aliases import (
    EntityProfile,
    alias_pairs,
    edit_distance,
    form_match,
)


def test_edit_distance() -> None:
    assert edit_distance("mell", "mela") == 1
    assert edit_distance("carolnie", "caroline") == 1  # a swap
    assert edit_distance("abc", "xyz", limit=1) == 2


def test_string_forms() -> None:
    assert form_match("mel", "melanie") == "prefix"
    assert form_match("caro", "caroline") == "prefix"
    assert form_match("mell", "melanie") == "fuzzy-prefix"
    assert form_match("carolin", "caroline") == "prefix"
    assert form_match("carolien", "caroline") == "misspelling"
    assert form_match("me", "melanie") is None  # too short
    assert form_match("melanie", "melanie") is None
    assert form_match("mel", "melanie smith") == "prefix"
    assert form_match("jon", "john") is None


def _space() -> list[EntityProfile]:
    return [
        EntityProfile("melanie", "Melanie", "PERSON", 40, frozenset({"pottery", "oliver"}),
                      {"caroline": 40}),
        EntityProfile("caroline", "Caroline", "PERSON", 50, frozenset({"lgbtq"}),
                      {"melanie": 50}),
        EntityProfile("mel", "Mel", "PERSON", 12, frozenset(), {"caroline": 12}),
        EntityProfile("mell", "Mell", "ORG", 1, frozenset(), {"caroline": 1}),
        EntityProfile("caro", "Caro", "PERSON", 3, frozenset(), {"melanie": 2, "caroline": 1}),
        EntityProfile("paris", "Paris", "GPE", 5, frozenset(), {"melanie": 5}),
    ]  # fmt: skip


def test_short_forms_addressed_to_a_speaker_merge_into_the_speaker() -> None:
    pairs = alias_pairs(_space(), frozenset({"melanie", "caroline"}))
    got = {(p.alias, p.canonical, p.form) for p in pairs}
    assert got == {
        ("caro", "caroline", "prefix"),
        ("mel", "melanie", "prefix"),
        ("mell", "melanie", "fuzzy-prefix"),
    }
    caro = next(p for p in pairs if p.alias == "caro")
    assert caro.addressed == round(2 / 3, 4)
    assert "said by others" in caro.reason


def test_no_support_no_merge() -> None:
    # nobody is a speaker and the two share no neighbours: the string form alone is not enough
    pairs = alias_pairs(_space(), frozenset({"user", "assistant"}))
    assert pairs == []


def test_shared_neighbours_support_a_merge() -> None:
    ents = [
        EntityProfile("alexander", "Alexander", "PERSON", 30, frozenset({"rome", "gym", "x"})),
        EntityProfile("alex", "Alex", "PERSON", 5, frozenset({"rome", "gym"})),
    ]
    (pair,) = alias_pairs(ents, frozenset())
    assert (pair.alias, pair.canonical) == ("alex", "alexander")
    assert pair.neighbour_jaccard == round(2 / 3, 4)


def test_ambiguous_short_forms_stay_apart() -> None:
    ents = [
        EntityProfile("joanna", "Joanna", "PERSON", 30, frozenset({"a"})),
        EntityProfile("joanne", "Joanne", "PERSON", 20, frozenset({"a"})),
        EntityProfile("joa", "Joa", "PERSON", 2, frozenset({"a"})),
    ]
    assert [p.alias for p in alias_pairs(ents, frozenset())] == []


def test_undone_pairs_and_speakers_are_never_aliases() -> None:
    speakers = frozenset({"melanie", "caroline", "mel"})
    assert "mel" not in {p.alias for p in alias_pairs(_space(), speakers)}
    blocked = frozenset({("caro", "caroline")})
    pairs = alias_pairs(_space(), frozenset({"melanie", "caroline"}), blocked)
    assert "caro" not in {p.alias for p in pairs}


def test_the_canonical_must_be_the_more_mentioned() -> None:
    ents = [
        EntityProfile("mel", "Mel", "PERSON", 40, frozenset({"a"})),
        EntityProfile("melanie", "Melanie", "PERSON", 3, frozenset({"a"})),
    ]
    assert alias_pairs(ents, frozenset()) == []
