"""Batches of texts for the embedding model, sized by padded word pieces."""

from __future__ import annotations

import pytest

from pipelines.models.batching import piece_batches


def test_longest_first_within_the_padded_budget() -> None:
    lengths = [10, 250, 30, 240, 12, 11]
    batches = piece_batches(lengths, max_pieces=500, max_texts=64)
    assert batches == [[1, 3], [2, 4, 5, 0]]  # 2 x 250 = 500; then 4 x 30 = 120


def test_every_text_once_and_the_text_cap() -> None:
    lengths = [7] * 10
    batches = piece_batches(lengths, max_pieces=10_000, max_texts=4)
    assert [len(b) for b in batches] == [4, 4, 2]
    assert sorted(i for b in batches for i in b) == list(range(10))


def test_a_text_longer_than_the_budget_is_alone() -> None:
    batches = piece_batches([300, 300, 5], max_pieces=256, max_texts=64)
    assert batches == [[0], [1], [2]]


def test_empty_and_bad_limits() -> None:
    assert piece_batches([], max_pieces=10, max_texts=1) == []
    with pytest.raises(ValueError):
        piece_batches([3], max_pieces=0, max_texts=1)
