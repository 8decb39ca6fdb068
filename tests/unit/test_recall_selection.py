"""Tests for the pure selection of step ``select`` (pipelines.recall.steps.select)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.recall.steps.select import mmr_select


def _ids(n: int) -> list[str]:
    return [f"m{i}" for i in range(n)]


def test_mmr_skips_near_duplicate() -> None:
    embeddings = np.array([[1.0, 0.0], [0.99, 0.01], [0.0, 1.0], [-1.0, -1.0]])
    relevance = [1.0, 0.95, 0.6, 0.0]
    picks = mmr_select(["a", "a2", "b", "low"], relevance, embeddings, k=2, lambda_=0.5)
    assert [p.id for p in picks] == ["a", "b"]
    assert picks[0].penalty == 0.0 and picks[0].rank == 1
    assert picks[1].rank == 2
    assert picks[1].penalty == pytest.approx(0.0)
    assert picks[1].gain == pytest.approx(picks[1].relevance - 0.5 * picks[1].penalty)


def test_mmr_without_diversity_is_top_k() -> None:
    embeddings = np.array([[1.0, 0.0], [0.99, 0.01], [0.0, 1.0]])
    picks = mmr_select(["a", "a2", "b"], [1.0, 0.95, 0.6], embeddings, k=2, lambda_=0.0)
    assert [p.id for p in picks] == ["a", "a2"]


def test_mmr_normalises_relevance() -> None:
    embeddings = np.eye(3)
    picks = mmr_select(_ids(3), [10.0, 20.0, 15.0], embeddings, k=3, lambda_=0.5)
    assert [(p.id, p.relevance) for p in picks] == [("m1", 1.0), ("m2", 0.5), ("m0", 0.0)]
    flat = mmr_select(_ids(3), [3.0, 3.0, 3.0], embeddings, k=3, lambda_=0.5)
    assert [p.relevance for p in flat] == [1.0, 1.0, 1.0]
    assert [p.id for p in flat] == _ids(3)  # ties keep input order


def test_mmr_embedding_norm_is_irrelevant() -> None:
    rng = np.random.default_rng(7)
    embeddings = rng.normal(size=(8, 4))
    relevance = rng.random(8).tolist()
    scaled = embeddings * rng.uniform(0.1, 10.0, size=(8, 1))
    first = mmr_select(_ids(8), relevance, embeddings, k=5, lambda_=0.7)
    second = mmr_select(_ids(8), relevance, scaled, k=5, lambda_=0.7)
    assert [p.id for p in first] == [p.id for p in second]


def test_mmr_anti_correlation_is_not_rewarded() -> None:
    embeddings = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    picks = mmr_select(["a", "anti", "orth", "low"], [1.0, 0.5, 0.5, 0.0], embeddings, k=3)
    assert picks[1].penalty == 0.0
    assert [p.id for p in picks[:2]] == ["a", "anti"]  # tie with "orth" -> input order
    assert picks[1].gain == picks[1].relevance


def test_mmr_zero_embedding_is_never_penalised() -> None:
    embeddings = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
    picks = mmr_select(["a", "dup", "none"], [1.0, 0.9, 0.5], embeddings, k=3, lambda_=1.0)
    assert [p.id for p in picks] == ["a", "none", "dup"]
    assert picks[1].penalty == 0.0


def test_mmr_edge_cases() -> None:
    assert mmr_select([], [], np.zeros((0, 3)), k=5) == []
    assert mmr_select(["a"], [1.0], np.ones((1, 3)), k=0) == []
    assert [p.id for p in mmr_select(["a", "b"], [1.0, 0.5], np.eye(2), k=10)] == ["a", "b"]


@pytest.mark.parametrize(
    ("ids", "relevance", "embeddings", "k", "lambda_"),
    [
        (["a", "b"], [1.0], np.eye(2), 1, 0.5),  # length mismatch
        (["a", "a"], [1.0, 0.5], np.eye(2), 1, 0.5),  # duplicate ids
        (["a", "b"], [1.0, 0.5], np.eye(3), 1, 0.5),  # wrong embedding rows
        (["a", "b"], [1.0, 0.5], np.eye(2), -1, 0.5),  # negative k
        (["a", "b"], [1.0, 0.5], np.eye(2), 1, 1.5),  # lambda out of range
        (["a", "b"], [1.0, float("nan")], np.eye(2), 1, 0.5),  # NaN relevance
        (["a", "b"], [1.0, 0.5], np.array([[1.0, np.inf], [0.0, 1.0]]), 1, 0.5),
    ],
)
def test_mmr_rejects_bad_input(
    ids: list[str], relevance: list[float], embeddings: np.ndarray, k: int, lambda_: float
) -> None:
    with pytest.raises(ValueError):
        mmr_select(ids, relevance, embeddings, k, lambda_)


@st.composite
def _mmr_case(draw: st.DrawFn) -> tuple[list[float], np.ndarray, int]:
    n = draw(st.integers(1, 15))
    d = draw(st.integers(1, 6))
    relevance = draw(st.lists(st.floats(-5, 5), min_size=n, max_size=n))
    flat = draw(st.lists(st.floats(-3, 3), min_size=n * d, max_size=n * d))
    k = draw(st.integers(0, 20))
    return relevance, np.array(flat).reshape(n, d), k


@settings(max_examples=60)
@given(_mmr_case(), st.floats(0.0, 1.0))
def test_mmr_returns_min_k_n_distinct(
    case: tuple[list[float], np.ndarray, int], lam: float
) -> None:
    relevance, embeddings, k = case
    n = len(relevance)
    picks = mmr_select(_ids(n), relevance, embeddings, k, lam)
    assert len(picks) == min(k, n)
    assert len({p.id for p in picks}) == len(picks)
    assert [p.rank for p in picks] == list(range(1, len(picks) + 1))
    for p in picks:
        assert 0.0 <= p.relevance <= 1.0
        assert 0.0 <= p.penalty <= 1.0
        assert p.gain == pytest.approx(p.relevance - lam * p.penalty)
    # penalties only grow and the pool only shrinks, so greedy gains never increase
    gains = [p.gain for p in picks]
    assert all(later <= earlier + 1e-12 for earlier, later in itertools.pairwise(gains))
    assert picks == mmr_select(_ids(n), relevance, embeddings, k, lam)  # deterministic


@settings(max_examples=60)
@given(_mmr_case(), st.lists(st.integers(-50, 50), min_size=15, max_size=15))
def test_mmr_lambda_zero_is_stable_top_k(
    case: tuple[list[float], np.ndarray, int], grid: list[int]
) -> None:
    _, embeddings, k = case
    relevance = [float(value) for value in grid[: embeddings.shape[0]]]
    n = len(relevance)
    picks = mmr_select(_ids(n), relevance, embeddings, k, 0.0)
    expected = sorted(range(n), key=lambda i: -relevance[i])[: min(k, n)]
    # integer-valued relevance: min-max normalisation cannot merge distinct values
    assert [p.id for p in picks] == [f"m{i}" for i in expected]


@settings(max_examples=60)
@given(
    st.lists(st.integers(0, 4), min_size=1, max_size=15),
    st.lists(st.floats(0.0, 10.0), min_size=15, max_size=15),
)
def test_mmr_high_lambda_takes_every_distinct_item_before_a_duplicate(
    directions: list[int], raw_relevance: list[float]
) -> None:
    """With λ = 1 and orthogonal "topics", no topic repeats before all topics are covered."""
    n = len(directions)
    embeddings = np.eye(5)[directions] * 3.0
    picks = mmr_select(_ids(n), raw_relevance[:n], embeddings, k=n, lambda_=1.0)
    topics = [directions[int(p.id[1:])] for p in picks]
    distinct = len(set(directions))
    assert len(set(topics[:distinct])) == distinct


def test_group_novelty_prefers_a_second_group_over_a_second_pick_of_the_first() -> None:
    embeddings = np.eye(4)  # no similarity penalty at all: only the group term acts
    relevance = [1.0, 0.9, 0.8, 0.0]
    groups = ["s1", "s1", "s2", "s3"]
    plain = mmr_select(_ids(4), relevance, embeddings, k=2, lambda_=0.5)
    assert [p.id for p in plain] == ["m0", "m1"]
    novel = mmr_select(
        _ids(4), relevance, embeddings, k=3, lambda_=0.5, groups=groups, group_penalty=0.2
    )
    assert [p.id for p in novel] == ["m0", "m2", "m1"]
    assert [p.group_penalty for p in novel] == [0.0, 0.0, 0.2]
    assert novel[2].gain == pytest.approx(novel[2].relevance - 0.2)


def test_group_novelty_is_charged_once_per_group() -> None:
    # normalised relevance 1 / 0.923 / 0.538 / 0: the third member of group "a" costs μ once
    # (0.538 − 0.3 > 0, so it beats m3 of a new group); charged per pick (2μ) it would not
    embeddings = np.eye(4)
    picks = mmr_select(
        _ids(4),
        [1.0, 0.95, 0.7, 0.35],
        embeddings,
        k=4,
        lambda_=0.0,
        groups=["a", "a", "a", "b"],
        group_penalty=0.3,
    )
    assert [p.id for p in picks] == ["m0", "m1", "m2", "m3"]
    assert picks[2].group_penalty == pytest.approx(0.3)
    assert picks[2].gain == pytest.approx(picks[2].relevance - 0.3)


def test_group_novelty_ignores_items_without_a_group() -> None:
    embeddings = np.eye(3)
    picks = mmr_select(
        _ids(3),
        [1.0, 0.9, 0.8],
        embeddings,
        k=3,
        lambda_=0.0,
        groups=[None, None, "s"],
        group_penalty=0.5,
    )
    assert [p.id for p in picks] == ["m0", "m1", "m2"]
    assert all(p.group_penalty == 0.0 for p in picks)


def test_group_novelty_zero_is_plain_mmr() -> None:
    rng = np.random.default_rng(11)
    embeddings = rng.normal(size=(9, 5))
    relevance = rng.random(9).tolist()
    groups = [f"s{i % 3}" for i in range(9)]
    plain = mmr_select(_ids(9), relevance, embeddings, k=6, lambda_=0.5)
    zero = mmr_select(
        _ids(9), relevance, embeddings, k=6, lambda_=0.5, groups=groups, group_penalty=0.0
    )
    assert plain == zero


@pytest.mark.parametrize(
    ("groups", "penalty", "message"),
    [
        (["a"], 0.1, "groups"),
        (["a", "b"], -0.1, "group_penalty"),
        (["a", "b"], float("nan"), "group_penalty"),
    ],
)
def test_group_novelty_rejects_bad_input(groups: list[str], penalty: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mmr_select(_ids(2), [1.0, 0.5], np.eye(2), k=2, groups=groups, group_penalty=penalty)
