"""Tests for pipelines.ingest.text."""

from __future__ import annotations

import hashlib
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from pipelines.ingest.text import (
    content_hash,
    match_tokens,
    normalise_for_match,
    split_sentences,
    strip_code_blocks,
)


def test_content_hash_is_sha256_of_the_canonical_text() -> None:
    assert content_hash("hello") == hashlib.sha256(b"hello").hexdigest()
    assert len(content_hash("")) == 64


def test_content_hash_canonicalisation() -> None:
    composed = "caf\u00e9"
    decomposed = "cafe\u0301"
    assert content_hash(composed) == content_hash(decomposed)
    assert content_hash("a\r\nb") == content_hash("a\nb") == content_hash("a\rb")
    assert content_hash("  hello\n") == content_hash("hello")


def test_content_hash_keeps_interior_whitespace_case_and_punctuation() -> None:
    assert content_hash("Hello  world") != content_hash("Hello world")
    assert content_hash("Hello world") != content_hash("hello world")
    assert content_hash("Hello world") != content_hash("Hello world.")


@given(st.text())
def test_content_hash_is_stable_under_nfc_and_outer_whitespace(text: str) -> None:
    nfc = unicodedata.normalize("NFC", text)
    assert content_hash(text) == content_hash(nfc) == content_hash(f" \n{text}\t ")


def test_normalise_for_match() -> None:
    assert normalise_for_match("Héllo,  WORLD!") == "hello world"
    assert normalise_for_match("I don’t use v1.2.3 in src/app.py; e-mail me.") == (
        "i don't use v1.2.3 in src/app.py e-mail me"
    )
    assert normalise_for_match("user_id") == "user_id"
    assert match_tokens("It's 3.11, not 3.12!") == ["it's", "3.11", "not", "3.12"]


@given(st.text())
def test_normalise_for_match_is_idempotent(text: str) -> None:
    once = normalise_for_match(text)
    assert normalise_for_match(once) == once
    assert "  " not in once
    assert once == once.strip()


def test_split_sentences_handles_abbreviations_and_lines() -> None:
    text = (
        "Hi Dr. Smith! I moved to the U.S. Army base in 2019. It was e.g. great... Really? yes.\n"
        "- bullet one\n2. second item\n\n"
    )
    assert split_sentences(text) == [
        "Hi Dr. Smith!",
        "I moved to the U.S. Army base in 2019.",
        "It was e.g. great...",
        "Really?",
        "yes.",
        "bullet one",
        "second item",
    ]


def test_split_sentences_keeps_initials_and_decimals() -> None:
    assert split_sentences("J. K. Rowling wrote it. Price was 3.50 dollars.") == [
        "J. K. Rowling wrote it.",
        "Price was 3.50 dollars.",
    ]
    assert split_sentences("") == []
    assert split_sentences("   \n  ") == []


def test_strip_code_blocks() -> None:
    text = "Before\n```python\nx = 1\n```\nAfter\n```\nunterminated"
    stripped = strip_code_blocks(text)
    assert "x = 1" not in stripped
    assert "unterminated" not in stripped
    assert "Before" in stripped and "After" in stripped
