"""Tests for the domain-aware condensers."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.assemble.render import SectionKind, render_memory_section, render_summary_section
from pipelines.prompt.blocks import (
    MemoryRecord,
    StageSummaryRecord,
    parse_blocks,
    parse_records,
    unescape_record_content,
)
from pipelines.prompt.condensers import (
    CONDENSERS,
    choose_condenser,
    condense,
    condense_memory_blocks,
)
from pipelines.prompt.text_condensers import (
    ELISION,
    condense_assistant_message,
    condense_code_signatures,
    condense_entity_triples,
    condense_timeline,
    condense_user_message,
    truncate,
)
from pipelines.prompt.tokens import CharsPerToken

EST = CharsPerToken(3)


class WordsAndLines:
    """A non-character estimator: words plus line breaks (count("") == 0)."""

    def count(self, text: str) -> int:
        return len(text.split()) + text.count("\n")


# ------------------------------------------------------------------ contract (property)

_fragments = st.sampled_from(
    [
        "We chose Redis.",
        "Why did the cache fail?",
        "def load(path):",
        "    return open(path).read()",
        "class Store:",
        "```python",
        "```",
        "Redis -> used_by -> api",
        "(api, depends_on, redis)",
        "2025-03-01 deployed v2",
        "[2025-01-15] kickoff",
        "user: hello there.",
        "# heading",
        "",
        "plain words and more words",
    ]
)
_texts = st.one_of(
    st.lists(_fragments, max_size=60).map("\n".join),
    st.text(max_size=400),
)
_estimators = st.one_of(st.integers(1, 4).map(CharsPerToken), st.just(WordsAndLines()))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(CONDENSERS)),
    text=_texts,
    budget=st.integers(-5, 200),
    est=_estimators,
)
def test_every_condenser_fits_its_budget(
    name: str, text: str, budget: int, est: CharsPerToken | WordsAndLines
) -> None:
    result = CONDENSERS[name](text, budget, est)
    assert est.count(result) <= max(budget, 0)
    if est.count(text) <= budget:
        assert result == text


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_texts, budget=st.integers(1, 200))
def test_truncate_returns_a_prefix_plus_marker(text: str, budget: int) -> None:
    result = truncate(text, budget, EST)
    kept = result.removesuffix(ELISION).rstrip() if result != text else result
    assert text.startswith(kept)


# --------------------------------------------------------------------------- behaviour


def test_truncate_cuts_at_a_line_boundary_with_marker() -> None:
    text = "\n".join(f"line number {i} with some words" for i in range(20))
    result = truncate(text, 40, EST)
    assert result.endswith("\n" + ELISION)
    body = result.removesuffix("\n" + ELISION)
    assert text.startswith(body) and text[len(body)] == "\n"
    assert EST.count(result) <= 40


def test_truncate_edge_budgets() -> None:
    assert truncate("anything", 0, EST) == ""
    assert truncate("abcdefghij", 1, EST) == "abc"  # marker cannot fit: bare prefix
    assert truncate("short", 10, EST) == "short"


def test_user_message_keeps_question_first_and_last_sentence() -> None:
    filler = " ".join(f"Filler sentence number {i} goes here." for i in range(30))
    text = f"I run a bakery. {filler} How should I price croissants? Thanks a lot."
    result = condense_user_message(text, 40, EST)
    assert "How should I price croissants?" in result
    assert "I run a bakery." in result
    assert ELISION in result
    assert EST.count(result) <= 40


def test_user_message_prefers_the_question_when_tight() -> None:
    text = "Background that is long and winding. " * 5 + "Where is the config?"
    result = condense_user_message(text, 8, EST)
    assert "Where is the config?" in result


def test_assistant_message_keeps_code_and_drops_prose() -> None:
    code = "```python\ndef area(r):\n    return 3.14159 * r * r\n```"
    prose = " ".join(f"This is explanatory sentence {i}." for i in range(40))
    text = f"Here is the function.\n\n{code}\n\n{prose}"
    result = condense_assistant_message(text, 60, EST)
    assert code in result
    assert "explanatory sentence 39" not in result
    assert EST.count(result) <= 60


def test_assistant_message_falls_back_to_signatures_for_huge_code() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(200))
    text = f"```python\ndef big():\n{body}\n```\nDone."
    result = condense_assistant_message(text, 30, EST)
    assert "def big():" in result
    assert EST.count(result) <= 30


def test_entity_triples_keep_the_most_connected_and_drop_prose() -> None:
    lines = [
        "Some narrative about the project that is not structured at all.",
        "alice -> manages -> redis",
        "bob -> likes -> tea",
        "redis -> serves -> api",
        "alice -> reviews -> api",
        "More rambling prose that should go first.",
    ]
    text = "\n".join(lines)
    result = condense_entity_triples(text, 20, EST)
    assert "alice -> manages -> redis" in result
    assert "bob -> likes -> tea" not in result  # least connected entities
    assert "rambling" not in result
    assert EST.count(result) <= 20


def test_timeline_keeps_first_and_most_recent_events() -> None:
    events = [f"2024-01-{day:02d} event on day {day}" for day in range(1, 29)]
    shuffled = events[10:] + events[:10]  # order in text is not chronological
    result = condense_timeline("\n".join(shuffled), 25, EST)
    assert "2024-01-01 event on day 1" in result
    assert "2024-01-28 event on day 28" in result
    assert ELISION in result
    assert "day 15" not in result


def test_code_signatures_keep_definitions() -> None:
    code = "\n".join(
        [
            "import os",
            "class Store:",
            *[f"    value_{i} = compute({i})" for i in range(30)],
            "    def get(self, key):",
            "        return self.data[key]",
            "def helper(x, y):",
            "    return x + y",
        ]
    )
    result = condense_code_signatures(code, 30, EST)
    for signature in ("class Store:", "    def get(self, key):", "def helper(x, y):"):
        assert signature in result
    assert "value_29" not in result


@pytest.mark.parametrize(
    ("text", "tags", "expected"),
    [
        ("anything", ["code"], "code_signatures"),
        ("anything", ["Event"], "timeline"),
        ("```py\nx = 1\n```\nSome prose.", [], "assistant_message"),
        ("def a():\n    pass\ndef b():\n    pass", [], "code_signatures"),
        ("a -> b -> c\nd -> e -> f", [], "entity_triples"),
        ("[assistant]: here you go.", [], "assistant_message"),
        ("user: can you help?", [], "user_message"),
        ("2025-01-01 start\n2025-02-01 middle\n2025-03-01 end", [], "timeline"),
        ("Just a plain sentence. And another.", [], "user_message"),
    ],
)
def test_choose_condenser_by_shape(text: str, tags: list[str], expected: str) -> None:
    assert choose_condenser(text, tags) == expected


def test_choose_condenser_detects_memory_sections() -> None:
    section = render_memory_section(SectionKind.CURRENT_STAGE, [MemoryRecord("m1", "hello")])
    assert choose_condenser(section) == "memory_blocks"


def test_condense_reports_the_condenser_and_rejects_unknown_names() -> None:
    text = "2025-01-01 a\n2025-01-02 b\n2025-01-03 c\n" * 20
    result, name = condense(text, 10, EST)
    assert name == "timeline" and EST.count(result) <= 10
    with pytest.raises(KeyError):
        condense(text, 10, EST, "nope")


# ----------------------------------------------------------------------- memory blocks

# A "<" that opens or closes one of the prompt's tags ("<m ", "</memories>"; not "<memory>").
_OUR_TAGS = re.compile(r"[<\uff1c\ufe64]\s*/?\s*(?:m|summary|memories)(?=[\s>/]|$)", re.I)

_memory_texts = st.lists(
    st.sampled_from(
        [
            *"ab #<>/&\n.?",
            "</memory>",
            "<memory id='x'>",
            "</m>",
            "<m by='x'>",
            "\n## Hi",
            " -> ",
            "</memories>",
            "<int:x>",
        ]
    ),
    max_size=80,
).map("".join)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(contents=st.lists(_memory_texts, min_size=1, max_size=8), budget=st.integers(0, 400))
def test_memory_records_condenser_never_breaks_delimiters(contents: list[str], budget: int) -> None:
    # Three memories a day: records share group lines, and trailing groups can go.
    memories = [
        MemoryRecord(f"m{i}", c, f"u{i}", f"2025-01-0{1 + i // 3}", "s1")
        for i, c in enumerate(contents)
    ]
    section = render_memory_section(SectionKind.RELATED_PRIOR, memories)
    result = condense_memory_blocks(section, budget, EST)
    assert EST.count(result) <= budget
    records = parse_records(result)
    # Balanced and intact: the data block is whole or absent, never half-open.
    assert result.count("<memories>") == result.count("</memories>") <= 1
    # No tag of the prompt's is opened or closed by stored text (other "<" stay as written).
    assert len(_OUR_TAGS.findall(result)) == 2 * result.count("<memories>")
    # Kept records are the leading ones, in order, with their heads (provenance) whole.
    assert [r.head for r in records] == [
        f"[2025-01-0{1 + i // 3} | s1] u{i}: " for i in range(len(records))
    ]
    if 0 < len(records) < len(memories):
        assert f"{len(memories) - len(records)} more record" in result
    # Every group line left has a record under it, and only kept groups' lines are left.
    groups = [line for line in result.split("\n") if line.startswith("[2025")]
    assert groups == list(dict.fromkeys(r.group for r in records))
    # Condensed content never acquires a header-looking line nor a line that starts a record.
    for record in records:
        for line in record.content.split("\n")[1:]:
            assert line.startswith("  ") and not line.lstrip().startswith("#")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(contents=st.lists(_memory_texts, min_size=1, max_size=6), budget=st.integers(0, 400))
def test_summary_blocks_condenser_never_breaks_delimiters(contents: list[str], budget: int) -> None:
    summaries = [StageSummaryRecord(f"s{i}", c, "2025") for i, c in enumerate(contents)]
    section = render_summary_section(summaries)
    result = condense_memory_blocks(section, budget, EST)
    assert EST.count(result) <= budget
    blocks = parse_blocks(result)
    assert result.count("<summary ") == result.count("</summary>") == len(blocks)
    assert [b.opening.split('"')[1] for b in blocks] == [f"s{i}" for i in range(len(blocks))]
    if 0 < len(blocks) < len(summaries):
        assert f"{len(summaries) - len(blocks)} more record" in result
    for block in blocks:
        assert not any(line.lstrip().startswith("#") for line in block.content.split("\n"))


def test_memory_blocks_keep_all_records_when_only_content_must_shrink() -> None:
    memories = [MemoryRecord(f"m{i}", f"Fact {i}. " * 60) for i in range(4)]
    section = render_memory_section(SectionKind.CURRENT_STAGE, memories)
    result = condense_memory_blocks(section, 200, EST)
    records = parse_records(result)
    assert len(records) == 4  # count preserved: only contents were condensed
    assert all(unescape_record_content(r.content).startswith("Fact") for r in records)
    assert result.startswith(SectionKind.CURRENT_STAGE.header)
    assert EST.count(result) <= 200


def test_memory_blocks_gives_leftovers_to_earlier_records() -> None:
    memories = [MemoryRecord("m0", "Long first record. " * 50), MemoryRecord("m1", "short")]
    section = render_memory_section(SectionKind.CURRENT_STAGE, memories)
    result = condense_memory_blocks(section, 250, EST)
    first, second = parse_records(result)
    assert second.content == "short"
    assert EST.count(first.content) > 100


def test_memory_records_dropped_whole_say_so_after_the_block() -> None:
    memories = [MemoryRecord(f"m{i}", "x" * 30, "Ann", "2025-01-01") for i in range(30)]
    section = render_memory_section(SectionKind.CURRENT_STAGE, memories)
    result = condense_memory_blocks(section, 120, EST)
    records = parse_records(result)
    assert 0 < len(records) < 30
    assert result.endswith(
        f"</memories>\n[… {30 - len(records)} more records omitted to fit the context budget]"
    )
    bare = render_memory_section(SectionKind.CURRENT_STAGE, memories, notice=None)
    only_note = condense_memory_blocks(bare, 30, EST)
    assert "<memories>" not in only_note and "30 more records omitted" in only_note
