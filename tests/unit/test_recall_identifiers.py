"""The identifier rule (pipelines.recall.steps.identifiers): codes, hashes, paths, versions and
code-style names are identifiers; numbers with units, dates and prose compounds are not."""

from __future__ import annotations

import pytest

from pipelines.recall.steps.identifiers import (
    contains_identifier,
    find_identifiers,
    identifier_phrase,
    is_identifier,
)

IDENTIFIERS = [
    "SCALEMARK000007", "XQ-7734-ALPHA", "gpt4o", "claude-opus-4-7", "COVID-19", "a3f9c2e",
    "1234567", "src/app/main.py", "/etc/hosts", "./run.sh", "docs/api.md", "1.2.3", "v2.4",
    "python3.11", "user_id", "getUserById", "macOS", "main.py", "autocomplete.js", "kafka-3",
]  # fmt: skip
PROSE = [
    "1990s", "5pm", "3rd", "10km", "defaced", "and/or", "24/7", "9/11", "2023-05-08", "2022",
    "May", "iPhone", "4.5", "3.14", "e-mail", "mother-in-law", "30-day", "5-star", "B12",
    "mp3", "8.5.2023", "12/05/2023", "$100", "50%",
]  # fmt: skip


@pytest.mark.parametrize("token", IDENTIFIERS)
def test_identifiers(token: str) -> None:
    assert is_identifier(token)


@pytest.mark.parametrize("token", PROSE)
def test_prose(token: str) -> None:
    assert not is_identifier(token)


def test_find_identifiers_strips_punctuation_and_keeps_order() -> None:
    query = "Did ticket JIRA-1234 (commit a3f9c2e) touch src/app/main.py? and jira-1234?"
    assert find_identifiers(query) == ["JIRA-1234", "a3f9c2e", "src/app/main.py"]
    assert find_identifiers("What did Caroline paint in May 2023?") == []
    assert find_identifiers(query, limit=2) == ["JIRA-1234", "a3f9c2e"]


def test_contains_identifier_needs_whole_tokens() -> None:
    assert contains_identifier("done (ref: SCALEMARK000042).", "scalemark000042")
    assert not contains_identifier("done (ref: SCALEMARK0000420).", "SCALEMARK000042")
    assert not contains_identifier("see XSCALEMARK000042", "SCALEMARK000042")
    assert contains_identifier("path: src/app/main.py, line 3", "src/app/main.py")


def test_identifier_phrase_escapes_quotes_and_backslashes() -> None:
    assert identifier_phrase('C:\\Temp\\"x"1') == '"c:\\\\temp\\\\\\"x\\"1"'
    assert identifier_phrase("XQ-7734-ALPHA") == '"xq-7734-alpha"'
