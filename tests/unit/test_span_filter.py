"""Which recognised spans are names (pipelines.ingest.span_filter), as pure functions."""

from __future__ import annotations

from pipelines.ingest.span_filter import Casing, keep_term, opens_sentence, refine_span


def _refine(
    text: str,
    span: str,
    batch: list[str],
    speakers: frozenset[str] = frozenset(),
    label: str = "PERSON",
    dictionary: frozenset[str] = frozenset(),
) -> str | None:
    start = text.index(span)
    casing = Casing.of([text, *batch], ordinary=dictionary)
    kept = refine_span(text, start, start + len(span), casing, speakers, label)
    return None if kept is None else text[kept[0] : kept[1]]


def test_greetings_and_interjections_are_trimmed_from_a_name() -> None:
    assert _refine("Bye Caroline, take care.", "Bye Caroline", []) == "Caroline"
    assert _refine("Yep John, let's go.", "Yep John", []) == "John"
    assert _refine("Congrats, Melanie!", "Congrats", []) is None
    assert _refine("Nah, it was fine.", "Nah", []) is None


def test_lower_case_fragments_are_no_names() -> None:
    assert _refine("it was kinda nerve wracking", "kinda nerve", []) is None


def test_a_common_word_capitalised_at_a_sentence_start_is_dropped() -> None:
    batch = ["i play the guitar every day", "my guitar is old"]
    assert _refine("Guitar lessons are going well.", "Guitar", batch) is None
    # a name is capitalised wherever it stands
    assert _refine("Barcelona was amazing.", "Barcelona", ["we loved Barcelona"]) == "Barcelona"


def test_a_name_opening_a_sentence_without_evidence_is_kept() -> None:
    assert _refine("Barcelona was amazing.", "Barcelona", []) == "Barcelona"


def test_speakers_names_and_acronyms_are_kept() -> None:
    batch = ["the mel is a unit", "mel mel mel"]
    assert _refine("Thanks, Mel!", "Mel", batch, frozenset({"mel"})) == "Mel"
    assert _refine("NASA launched it.", "NASA", ["nasa nasa"]) == "NASA"


def test_weekday_abbreviations_are_dates() -> None:
    assert _refine("I joined last Tues.", "Tues", []) is None


def test_ordinary_words_opening_a_heading_are_trimmed() -> None:
    batch = ["update the file", "we update it often"]
    text = "### Step 1: Update Dockerfile\n"
    assert _refine(text, "Update Dockerfile", batch, label="ORG") == "Dockerfile"
    # "New" is capitalised inside sentences ("in New York"): kept
    text = "New York was busy."
    assert _refine(text, "New York", ["a new job in New York", "new shoes"]) == "New York"


def test_a_verb_opening_a_sentence_is_no_name_unless_a_person() -> None:
    verbs = frozenset({"integrate", "rob"})
    text = "Integrates with Git providers."
    assert _refine(text, "Integrates", [], label="GPE", dictionary=verbs) is None
    assert _refine("Rob called.", "Rob", [], label="PERSON", dictionary=verbs) == "Rob"


def test_a_span_of_common_words_only_is_dropped() -> None:
    batch = ["a scalene triangle", "the triangle", "scalene"]
    assert _refine("Draw a Scalene Triangle now", "Scalene Triangle", batch) is None


def test_title_case_headings_are_no_evidence_of_capitals() -> None:
    casing = Casing.of(["## Update The Config\n", "**Update Notes**", "we Update it"])
    assert casing.inner_capital["update"] == 1 and casing.lower["config"] == 0


def test_plain_code_words_are_no_names() -> None:
    casing = Casing.of(
        ["set the `required` attribute, it is required", "use `numpy` here", "`numpy`"],
        dictionary=frozenset({"required", "select"}),
    )
    assert not keep_term("required", casing)
    assert keep_term("numpy", casing)
    assert not keep_term("SELECT", casing)
    assert keep_term("user_id", casing)


def test_sentence_openings() -> None:
    text = "Hi. Then - Mel said: Wow"
    assert opens_sentence(text, 0)
    assert opens_sentence(text, text.index("Then"))
    assert not opens_sentence(text, text.index("said"))
    assert opens_sentence(text, text.index("Wow"))


def test_latex_math_is_no_place_for_names() -> None:
    from pipelines.ingest.span_filter import math_ranges

    text = r"Triangle \( \triangle ABC \) with \( m_a \) and $$x = BC$$ in Paris"
    ranges = math_ranges(text)
    assert len(ranges) == 3
    inside = [text.index(w) for w in ("ABC", "m_a", "BC$$")]
    assert all(any(a <= i < b for a, b in ranges) for i in inside)
    assert not any(a <= text.index("Paris") < b for a, b in ranges)
    assert math_ranges("no math, $5 and $6") == []


def test_headings_lists_and_word_pieces() -> None:
    batch = ["the styling is off", "a problem with the setup", "the problem", "setup"]
    assert _refine("#### CSS Styling\n", "CSS Styling", batch, label="ORG") == "CSS"
    assert _refine("### Problem Setup\n", "Problem Setup", batch, label="ORG") is None
    assert _refine("About, Skills, Projects", "Skills, Projects", [], label="ORG") is None
    assert _refine("from 300KB to 180KB", "KB", [], label="ORG") is None
    assert _refine("- Triangle 1: sides", "Triangle 1", ["a triangle"], label="LAW") is None
