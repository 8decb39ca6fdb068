"""The chunker of long memories (pipelines.ingest.chunking): structure first, then length."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.ingest.chunking import blocks, chunk_spans

_PIECE = re.compile(r"\w+|[^\w\s]")
PIECE_CHARS = 4  # a toy word-piece tokenizer: words cut into pieces of 4 characters


def offsets(text: str) -> list[tuple[int, int]]:
    out = []
    for m in _PIECE.finditer(text):
        for s in range(m.start(), m.end(), PIECE_CHARS):
            out.append((s, min(s + PIECE_CHARS, m.end())))
    return out


def count(texts: Sequence[str]) -> list[int]:
    return [len(offsets(t)) for t in texts]


def chunks(text: str, window: int) -> list[tuple[int, int]]:
    return chunk_spans(text, window, offsets(text), count)


def assert_valid(text: str, spans: list[tuple[int, int]], window: int) -> None:
    covered = [0] * len(text)
    previous_end = 0
    for s, e in spans:
        assert previous_end <= s < e <= len(text), (s, e)
        assert not text[s].isspace() and not text[e - 1].isspace()
        assert count([text[s:e]])[0] <= window
        for i in range(s, e):
            covered[i] += 1
        previous_end = e
    for i, ch in enumerate(text):
        if not ch.isspace():
            assert covered[i] == 1, (i, ch)


# -------------------------------------------------------------------------------- structure

DOC = """# Setup

Install the package first. Then configure it.

- first item
  continued here
- second item
1. numbered

```python
def f():

    return 1
```
## Usage
A paragraph
on two lines.
"""


def test_blocks_follow_structure() -> None:
    got = [(b.kind, DOC[b.start : b.end]) for b in blocks(DOC)]
    assert got == [
        ("heading", "# Setup"),
        ("paragraph", "Install the package first. Then configure it."),
        ("list", "- first item\n  continued here"),
        ("list", "- second item"),
        ("list", "1. numbered"),
        ("code", "```python\ndef f():\n\n    return 1\n```"),
        ("heading", "## Usage"),
        ("paragraph", "A paragraph\non two lines."),
    ]


def test_unterminated_fence_runs_to_the_end() -> None:
    text = "Look:\n```\ncode line\n\nmore code"
    assert [b.kind for b in blocks(text)] == ["paragraph", "code"]
    assert text[blocks(text)[1].start :].startswith("```")


def test_short_text_is_one_chunk() -> None:
    text = "Hello there.\n\nA second paragraph."
    assert chunks(text, 64) == [(0, len(text))]


def test_heading_starts_a_chunk_and_code_stays_whole() -> None:
    spans = chunks(DOC, 30)
    texts = [DOC[s:e] for s, e in spans]
    assert_valid(DOC, spans, 30)
    assert any(t.startswith("## Usage") for t in texts)
    code = "```python\ndef f():\n\n    return 1\n```"
    assert any(code in t for t in texts)  # a block that fits is never split


def test_oversized_code_block_splits_at_lines() -> None:
    code = "```\n" + "\n".join(f"x{i} = compute({i})" for i in range(200)) + "\n```"
    spans = chunks(code, 40)
    assert len(spans) > 1
    assert_valid(code, spans, 40)
    # cuts fall at line ends: every chunk but the last ends where a line ends
    for _, e in spans[:-1]:
        assert code[e] == "\n"


def test_long_sentence_without_spaces_is_cut_by_pieces() -> None:
    text = "a" * 1000
    spans = chunks(text, 10)
    assert_valid(text, spans, 10)
    assert len(spans) == 25  # 250 pieces of 4 characters, 10 per chunk


def test_recount_halves_a_chunk_the_window_does_not_fit() -> None:
    # a count that disagrees with the offsets (as a real tokenizer can at a cut): every text
    # counts double, so the check must split further
    text = " ".join(f"w{i}" for i in range(100))
    spans = chunk_spans(text, 20, offsets(text), lambda ts: [2 * n for n in count(ts)])
    for s, e in spans:
        assert 2 * count([text[s:e]])[0] <= 20


def test_window_must_be_positive() -> None:
    with pytest.raises(ValueError, match="window"):
        chunk_spans("x", 0, [(0, 1)], count)


# -------------------------------------------------------------------------------- properties

_LINE = st.one_of(
    st.text(alphabet="abc XYZ.,!?\t", min_size=0, max_size=80),
    st.sampled_from(["```", "~~~", "# Title", "## Sub", "- item", "* item", "1. step", "  cont"]),
    st.text(alphabet="é漢😀 _-/", min_size=1, max_size=20),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=40), st.integers(min_value=1, max_value=60))
def test_chunks_cover_the_text_and_fit_the_window(lines: list[str], window: int) -> None:
    text = "\n".join(lines)
    assert_valid(text, chunks(text, window), window)


@settings(max_examples=200, deadline=None)
@given(st.lists(_LINE, max_size=40), st.integers(min_value=8, max_value=60))
def test_blocks_that_fit_are_never_split(lines: list[str], window: int) -> None:
    text = "\n".join(lines)
    spans = chunks(text, window)
    for b in blocks(text):
        if count([text[b.start : b.end]])[0] <= window:
            assert any(s <= b.start and b.end <= e for s, e in spans), text[b.start : b.end]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.integers(min_value=1, max_value=30))
def test_any_text(text: str, window: int) -> None:
    assert_valid(text, chunks(text, window), window)
