"""Tests for pipelines.recall.query: cleaning, keywords, decomposition, Lucene, speakers."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pipelines.recall.query import (
    LUCENE_SPECIAL_CHARS,
    build_fulltext_query,
    clean_query,
    ends_with_question,
    escape_lucene,
    extract_keywords,
    find_speakers,
    first_person,
    strip_meta,
    strip_speakers,
    task_request,
)

# --- clean_query


def test_clean_query_normalises_whitespace_and_controls() -> None:
    assert clean_query("  What\x00 did\tCaroline\u200b\n do? ", 2_000) == "What did Caroline do?"


def test_clean_query_rejects_empty_and_too_long() -> None:
    with pytest.raises(ValueError, match="empty"):
        clean_query(" \n\t ", 2_000)
    with pytest.raises(ValueError, match="longer"):
        clean_query("x" * 2_001, 2_000)
    assert clean_query("x" * 2_000, 2_000) == "x" * 2_000
    assert clean_query("abc", max_chars=3) == "abc"


# --- extract_keywords


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "When did Caroline go to the LGBTQ support group?",
            ["Caroline", "LGBTQ", "support", "group"],
        ),
        ("What did Melanie paint recently?", ["Melanie", "paint"]),
        (
            "Would Caroline pursue writing as a career option?",
            ["Caroline", "pursue", "writing", "career", "option"],
        ),
        ("What is Caroline's identity?", ["Caroline", "identity"]),
        ("What do Jon and Gina both have in common?", ["Jon", "Gina"]),
        ('Did I mention "the blue door" to Anna?', ["the blue door", "Anna"]),
        ("What happened on 8 May 2023 at the lake?", ["8 May 2023", "lake"]),
        ("Anything from 2023-05-08 or May 2023?", ["2023-05-08", "May 2023"]),
        ("What did Melanie do in May?", ["Melanie", "May"]),
        ("May I ask what Jon said?", ["Jon"]),
        ("How many V8 engines?", ["V8", "engines"]),
        ("Tell me about my cat and dog", []),
    ],
)
def test_extract_keywords(query: str, expected: list[str]) -> None:
    assert extract_keywords(query) == expected


def test_extract_keywords_dedupes_case_insensitively_in_order() -> None:
    assert extract_keywords("Pottery class, pottery CLASS, Pottery") == ["Pottery", "class"]


def test_a_lower_case_keyword_needs_the_configured_length() -> None:
    assert extract_keywords("the cat sat on a mat") == []
    assert extract_keywords("the cat sat on a mat", min_chars=3) == ["cat", "sat", "mat"]


@given(st.text(max_size=200))
def test_extract_keywords_never_returns_stop_words_or_blanks(text: str) -> None:
    keywords = extract_keywords(text)
    assert keywords == extract_keywords(text)
    assert all(k.strip() == k and k for k in keywords)
    assert len({k.casefold() for k in keywords}) == len(keywords)
    assert not {k.casefold() for k in keywords} & {"what", "when", "the", "did", "how"}


# --- build_fulltext_query


def _assert_safe_lucene(query: str) -> None:
    """Every special char is escaped, except phrase quotes and the boost after a phrase."""
    in_phrase = False
    i = 0
    while i < len(query):
        ch = query[i]
        if ch == "\\":
            assert i + 1 < len(query), "dangling backslash"
            assert query[i + 1] in LUCENE_SPECIAL_CHARS, "needless escape"
            i += 2
            continue
        if ch == '"':
            in_phrase = not in_phrase
            if not in_phrase:  # closing quote must be followed by ^boost
                j = i + 1
                assert query[j] == "^"
                j += 1
                while j < len(query) and (query[j].isdigit() or query[j] == "."):
                    j += 1
                assert j > i + 2, "empty boost"
                i = j
                continue
            i += 1
            continue
        assert ch not in LUCENE_SPECIAL_CHARS, f"unescaped {ch!r} in {query!r}"
        i += 1
    assert not in_phrase, "unbalanced quotes"
    # outside phrases, clauses alternate with the OR operator
    parts = _split_outside_phrases(query)
    assert parts[1::2] == ["OR"] * (len(parts) // 2)
    assert len(parts) % 2 == 1
    for clause in parts[::2]:
        assert clause not in {"AND", "OR", "NOT", "TO", "&&", "||"}
        assert clause == clause.lower() or clause.startswith('"')


def _split_outside_phrases(query: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    in_phrase = False
    escaped = False
    for ch in query:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\":
            current.append(ch)
            escaped = True
        elif ch == '"':
            in_phrase = not in_phrase
            current.append(ch)
        elif ch == " " and not in_phrase:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def test_fulltext_query_basic() -> None:
    assert (
        build_fulltext_query("When did Caroline go to the LGBTQ support group?")
        == "caroline OR lgbtq OR support OR group"
    )


def test_fulltext_query_phrase_and_boost() -> None:
    query = build_fulltext_query('Did Anna mention "the blue door"?', phrase_boost=3.0)
    assert query == '"the blue door"^3 OR anna'
    _assert_safe_lucene(query)


def test_fulltext_query_neutralises_operators_and_escapes() -> None:
    query = build_fulltext_query("C++ AND node.js OR NOT title:foo* (a||b) && x/y")
    assert query is not None
    _assert_safe_lucene(query)
    assert "c\\+\\+" in query
    assert "title\\:foo\\*" in query
    assert "a\\|\\|b" in query
    assert "x\\/y" in query
    assert " AND " not in query and " NOT " not in query


@pytest.mark.parametrize(("boost", "rendered"), [(0.5, "0.5"), (0.001, "0.001"), (1000, "1000")])
def test_fulltext_phrase_boost_is_fixed_point(boost: float, rendered: str) -> None:
    query = build_fulltext_query('"blue door"', phrase_boost=boost)
    assert query == f'"blue door"^{rendered}'


@pytest.mark.parametrize("boost", [0.0, 1e-5, -1.0, 1e9, float("nan"), float("inf")])
def test_fulltext_phrase_boost_out_of_range(boost: float) -> None:
    with pytest.raises(ValueError):
        build_fulltext_query('"blue door"', phrase_boost=boost)


def test_fulltext_query_keeps_month_names_and_caps_terms() -> None:
    assert build_fulltext_query("What did Melanie do in May 2023?") == "melanie OR may OR 2023"
    query = build_fulltext_query(" ".join(f"word{i}" for i in range(50)), max_terms=5)
    assert query == "word0 OR word1 OR word2 OR word3 OR word4"


@pytest.mark.parametrize("text", ["", "   ", "what is the", '"" ?? !!', '\\ " ( )', "AND OR NOT"])
def test_fulltext_query_none_when_nothing_searchable(text: str) -> None:
    assert build_fulltext_query(text) is None


def test_escape_lucene_escapes_every_special() -> None:
    specials = "".join(sorted(LUCENE_SPECIAL_CHARS))
    escaped = escape_lucene(specials)
    assert escaped == "".join("\\" + ch for ch in specials)
    assert escape_lucene("plain") == "plain"


@settings(max_examples=300)
@given(st.text(max_size=120))
@example('a"b "c d" e\\')
@example('"x \\" y"')
@example('“curly "quoted" phrase” and (nested) [brackets] {braces}')
@example("a^2 ~fuzzy~ wild* ? +must -not !bang && || /regex/ TO AND OR NOT")
def test_fulltext_query_is_always_safe(text: str) -> None:
    query = build_fulltext_query(text)
    if query is not None:
        _assert_safe_lucene(query)


@given(st.text(alphabet=st.sampled_from('ab"\\:()^*?~ -+'), max_size=60))
def test_fulltext_query_safe_on_syntax_heavy_text(text: str) -> None:
    query = build_fulltext_query(text)
    if query is not None:
        _assert_safe_lucene(query)


# --- find_speakers


def test_find_speakers() -> None:
    known = ["Caroline", "Melanie", "Jon", "Jon Snow", "  "]
    assert find_speakers("What is caroline's identity?", known) == ["Caroline"]
    assert find_speakers("Did MELANIE and Caroline meet?", known) == ["Melanie", "Caroline"]
    assert find_speakers("Jon  Snow met Jon", known) == ["Jon Snow", "Jon"]
    assert find_speakers("Jonathan and Carolines", known) == []
    assert find_speakers("James' bike", ["James"]) == ["James"]
    assert find_speakers("anything", []) == []


def test_strip_speakers() -> None:
    known = ["Caroline", "Melanie", "Jon Snow"]
    assert strip_speakers("What did Caroline research?", known) == "What did research?"
    assert strip_speakers("What is caroline's identity?", known) == "What is identity?"
    assert strip_speakers("Did Melanie and Caroline meet?", known) == "Did and meet?"
    assert strip_speakers("What kind of dog did Caroline get?", known) == (
        "What kind of dog did get?"
    )
    # nothing searchable would be left: the query stays as it is
    assert strip_speakers("Where did Jon Snow go?", known) == "Where did Jon Snow go?"
    assert strip_speakers("Caroline?", known) == "Caroline?"
    assert strip_speakers("no names here", known) == "no names here"


@given(st.text(max_size=80), st.lists(st.text(max_size=12), max_size=5))
def test_find_speakers_returns_known_names_once(query: str, known: list[str]) -> None:
    found = find_speakers(query, known)
    normalised = {" ".join(name.split()) for name in known}
    assert set(found) <= normalised
    assert len(found) == len(set(found))


def test_scope_fulltext_query_requires_the_space_without_scoring_it():
    from pipelines.recall.query import scope_fulltext_query
    from pipelines.spaces import fulltext_tag

    tag = fulltext_tag("locomo-conv-26")
    assert tag.isalnum() and tag.startswith("sp")
    assert fulltext_tag("locomo-conv-26") == tag != fulltext_tag("locomo_conv_26")
    q = build_fulltext_query('cello "bowing technique"')
    assert scope_fulltext_query(q, tag) == f"+space_tag:{tag}^0 +text:({q})"
    with pytest.raises(ValueError):
        scope_fulltext_query(q, "sp x) OR (*")


# --- ends_with_question


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Wow, that's great! What did you paint?", True),
        ("How was the support group?  ", True),
        ('She asked "are you coming?"', True),  # closing quotes aside
        ("Did you like it?)", True),
        ("Where? 你好？", True),  # a full-width question mark
        ("Did I tell you? I got the job.", False),  # asks in passing, then tells
        ("I went to the LGBTQ support group yesterday.", False),
        ("", False),
        ("???", True),
    ],
)
def test_ends_with_question(text: str, asks: bool) -> None:
    assert ends_with_question(text) is asks


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("When does my first sprint end?", True),
        ("What did I decide about the database?", True),
        ("What did you recommend for my sprint?", False),  # about what the other party said
        ("What did Caroline paint?", False),
        ("Is it important?", False),
    ],
)
def test_first_person(query: str, expected: bool) -> None:
    assert first_person(query) is expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Could you show me how to implement a login feature?", True),
        ("How should I organize the different parts of a webpage in HTML?", True),
        ("What steps would you suggest I take?", True),
        ("What are some common responses when something goes wrong with an API?", True),
        ("When does my first sprint end?", False),
        ("Have I used Bootstrap components before?", False),
        ("How did you recommend managing the flow of requests?", False),
        ("Can you walk me through the order in which I brought up these topics?", False),
    ],
)
def test_task_request(query: str, expected: bool) -> None:
    assert task_request(query) is expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "Can you give me a comprehensive summary of how I handled the security challenges "
            "in my app?",
            "how I handled the security challenges in my app?",
        ),
        (
            "Can you list, in chronological order, the topics I brought up about my tracker?",
            "the topics about my tracker?",
        ),
        ("Which parts did I replace?", "Which parts did I replace?"),
        ("What did Caroline paint?", "What did Caroline paint?"),
        ("Can you summarize our conversations?", "our conversations?"),
    ],
)
def test_strip_meta_keeps_the_topic(query: str, expected: str) -> None:
    assert strip_meta(query) == expected
