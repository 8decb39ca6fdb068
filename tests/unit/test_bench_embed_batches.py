"""The embedding-batches benchmark's variant syntax."""

from __future__ import annotations

import pytest

from benchmarks.embed_batches import parse_variant


def test_variants() -> None:
    assert parse_variant("texts:64") == (1 << 30, 64)
    assert parse_variant("pieces:2048/32") == (2048, 32)
    assert parse_variant("pieces:1024") == (1024, 256)


@pytest.mark.parametrize("bad", ["tokens:5", "pieces:", "texts:x"])
def test_bad_variants(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_variant(bad)
