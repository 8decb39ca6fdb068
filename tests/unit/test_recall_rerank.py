"""Tests for pipelines.recall.steps.rerank.context_scores (the no-weights context reranker)."""

from __future__ import annotations

import pytest

from pipelines.recall.steps.rerank import context_scores


def test_own_similarity_without_neighbours() -> None:
    assert context_scores({"a": 0.4, "b": 0.2}, {}, weight=0.5, window=1) == {"a": 0.4, "b": 0.2}


def test_best_neighbour_adds_a_weighted_share() -> None:
    scores = context_scores(
        {"a": 0.3, "b": 0.35},
        {"a": [(1, 0.8), (1, 0.1)], "b": [(1, 0.2)]},
        weight=0.5,
        window=1,
    )
    assert scores["a"] == pytest.approx(0.3 + 0.5 * 0.8)
    assert scores["b"] == pytest.approx(0.35 + 0.5 * 0.2)
    assert scores["a"] > scores["b"]  # a turn that answers a relevant question wins


def test_distance_discounts_and_window_limits() -> None:
    neighbours = {"a": [(2, 0.8), (3, 0.9)]}
    assert context_scores({"a": 0.0}, neighbours, weight=1.0, window=2)["a"] == pytest.approx(0.4)
    assert context_scores({"a": 0.0}, neighbours, weight=1.0, window=1)["a"] == 0.0
    assert context_scores({"a": 0.1}, {"a": [(1, -0.5)]}, weight=1.0, window=1)["a"] == 0.1


def test_zero_weight_is_the_plain_similarity_and_bad_arguments_raise() -> None:
    assert context_scores({"a": 0.3}, {"a": [(1, 0.9)]}, weight=0.0, window=1) == {"a": 0.3}
    with pytest.raises(ValueError):
        context_scores({}, {}, weight=-0.1, window=1)
    with pytest.raises(ValueError):
        context_scores({}, {}, weight=0.1, window=-1)
