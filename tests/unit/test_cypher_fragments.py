"""Fragments: a block several statements share, written once and included at load time."""

from __future__ import annotations

from pathlib import Path

import pytest

import cypher
from cypher import Library, UnknownStatement


def _library(root: Path, files: dict[str, str]) -> Library:
    for name, text in files.items():
        path = root / f"{name}.cypher"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return Library(root)


def test_an_include_line_becomes_the_fragment_at_its_indentation(tmp_path: Path) -> None:
    library = _library(
        tmp_path,
        {
            "fragments/alive": "// what it is for\nAND m < 10\nAND NOT m IN $ids\n",
            "read/one": (
                "// a statement\nWITH $x AS m\nWHERE m > 0\n  @include fragments/alive\nRETURN m\n"
            ),
        },
    )
    assert library.load("read/one") == (
        "WITH $x AS m\nWHERE m > 0\n  AND m < 10\n  AND NOT m IN $ids\nRETURN m"
    )
    assert library.names() == ["read/one"]  # a fragment is no statement
    with pytest.raises(UnknownStatement, match="a fragment"):
        library.load("fragments/alive")


def test_only_fragments_are_included(tmp_path: Path) -> None:
    library = _library(
        tmp_path,
        {
            "read/other": "RETURN 1\n",
            "read/bad": "WITH $x AS m\n@include read/other\nRETURN m\n",
            "read/missing": "WITH $x AS m\n@include fragments/none\nRETURN m\n",
        },
    )
    with pytest.raises(UnknownStatement, match="not a fragment"):
        library.load("read/bad")
    with pytest.raises(UnknownStatement, match="fragments/none"):
        library.load("read/missing")


def test_every_product_statement_is_expanded() -> None:
    """No loaded statement keeps an include line, and the recall statements share one filter
    block (the request's filters are written once, in ``fragments/memory_filters``)."""
    texts = {name: cypher.load(name) for name in cypher.names()}
    assert not [name for name, text in texts.items() if cypher.INCLUDE in text]
    block = "AND ($tags IS NULL OR any(t IN coalesce(m.tags, []) WHERE t IN $tags))"
    using = [name for name, text in texts.items() if block in text]
    assert texts["recall/candidates"].count(block) == 7
    assert set(using) >= {
        "recall/candidates",
        "recall/chunk_candidates",
        "recall/identifier_candidates",
        "recall/replies",
        "recall/standing_candidates",
    }
    sources = [p for p in cypher.ROOT.rglob("*.cypher") if "fragments" not in p.parts]
    assert not [p for p in sources if block in p.read_text(encoding="utf-8")]
