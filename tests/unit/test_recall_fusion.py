"""Tests for the pure rank fusion and blending (steps fuse, rerank, session_documents and
late_interaction)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.recall.steps.fuse import signal_reliability, temporal_boost, top_peak, weighted_rrf
from pipelines.recall.steps.rerank import blend_rerank, min_max_normalise
from pipelines.recall.steps.session_documents import session_rank_boost, session_resolution


def test_weighted_rrf_scores_and_ranks() -> None:
    fused = weighted_rrf(
        {"vector": ["a", "b", "c"], "fulltext": ["b", "d"]},
        {"vector": 1.0, "fulltext": 0.5},
        k=60,
    )
    by_id = {item.id: item for item in fused}
    assert by_id["b"].score == pytest.approx(1 / 62 + 0.5 / 61)
    assert by_id["a"].score == pytest.approx(1 / 61)
    assert by_id["d"].score == pytest.approx(0.5 / 62)
    assert by_id["b"].ranks == {"vector": 2, "fulltext": 1}
    assert by_id["b"].contributions == pytest.approx({"vector": 1 / 62, "fulltext": 0.5 / 61})
    assert [item.id for item in fused] == ["b", "a", "c", "d"]


def test_zero_weight_signal_reports_ranks_but_adds_nothing() -> None:
    fused = weighted_rrf(
        {"vector": ["a", "b"], "heat": ["b", "z"]},
        {"vector": 1.0, "heat": 0.0},
        k=60,
    )
    by_id = {item.id: item for item in fused}
    assert by_id["b"].ranks == {"vector": 2, "heat": 1}
    assert by_id["b"].contributions["heat"] == 0.0
    assert by_id["b"].score == pytest.approx(1 / 62)
    assert "z" not in by_id  # only a zero-weight signal returned it
    assert [item.id for item in fused] == ["a", "b"]


def test_missing_weight_means_zero() -> None:
    fused = weighted_rrf({"vector": ["a"], "entity": ["b"]}, {"vector": 1.0})
    assert [item.id for item in fused] == ["a"]


def test_ties_broken_by_best_rank_then_id() -> None:
    # p and q are perfectly symmetric: equal score, equal best rank -> id order.
    fused = weighted_rrf({"s1": ["p", "q"], "s2": ["q", "p"]}, {"s1": 1.0, "s2": 1.0})
    assert [item.id for item in fused] == ["p", "q"]
    assert fused[0].score == fused[1].score
    # z (rank 1, weight 1) and a (rank 2, weight 2) both score exactly 1.0 with k = 0:
    # the better rank wins although "a" < "z".
    fused = weighted_rrf({"s1": ["z"], "s2": ["top", "a"]}, {"s1": 1.0, "s2": 2.0}, k=0)
    assert [(item.id, item.score) for item in fused] == [("top", 2.0), ("z", 1.0), ("a", 1.0)]


def test_duplicate_id_in_one_ranking_keeps_best_position() -> None:
    fused = weighted_rrf({"vector": ["a", "b", "a"]}, {"vector": 1.0})
    assert {item.id: item.ranks["vector"] for item in fused} == {"a": 1, "b": 2}


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError):
        weighted_rrf({"v": ["a"]}, {"v": -1.0})
    with pytest.raises(ValueError):
        weighted_rrf({"v": ["a"]}, {"v": math.nan})
    with pytest.raises(ValueError):
        weighted_rrf({"v": ["a"]}, {"v": 1.0}, k=-1)


def test_empty_inputs() -> None:
    assert weighted_rrf({}, {"vector": 1.0}) == []
    assert weighted_rrf({"vector": []}, {"vector": 1.0}) == []


ids = st.sampled_from([f"m{i}" for i in range(12)])
rankings_strategy = st.dictionaries(
    st.sampled_from(["vector", "fulltext", "entity", "heat", "recency"]),
    st.lists(ids, max_size=12, unique=True),
    max_size=5,
)
weights_strategy = st.fixed_dictionaries(
    {name: st.floats(0.0, 2.0) for name in ("vector", "fulltext", "entity", "heat", "recency")}
)


@given(rankings_strategy, weights_strategy, st.integers(0, 100))
def test_rrf_properties(rankings: dict[str, list[str]], weights: dict[str, float], k: int) -> None:
    fused = weighted_rrf(rankings, weights, k)
    # sorted, positive, deterministic, each id once
    scores = [item.score for item in fused]
    assert scores == sorted(scores, reverse=True)
    assert all(score >= 0 for score in scores)
    assert len({item.id for item in fused}) == len(fused)
    assert fused == weighted_rrf(dict(reversed(list(rankings.items()))), weights, k)
    for item in fused:
        assert item.score == pytest.approx(sum(item.contributions.values()))
        for signal, rank in item.ranks.items():
            assert rankings[signal][rank - 1] == item.id
            assert item.contributions[signal] == pytest.approx(weights[signal] / (k + rank))
    # every id with a positive-weight signal appears
    expected = {i for s, lst in rankings.items() if weights[s] > 0 for i in lst}
    assert {item.id for item in fused} == expected


@given(st.lists(ids, min_size=1, max_size=12, unique=True))
def test_single_signal_preserves_order(order: list[str]) -> None:
    fused = weighted_rrf({"vector": order}, {"vector": 0.7})
    assert [item.id for item in fused] == order


def test_temporal_boost_reorders() -> None:
    boosted = temporal_boost([("a", 1.0), ("b", 0.9), ("c", 0.5)], {"b", "c"}, 1.3)
    assert boosted == [("b", pytest.approx(1.17)), ("a", 1.0), ("c", pytest.approx(0.65))]
    assert temporal_boost([("a", 1.0)], set(), 1.3) == [("a", 1.0)]
    with pytest.raises(ValueError):
        temporal_boost([("a", 1.0)], {"a"}, math.inf)


def test_min_max_normalise() -> None:
    assert min_max_normalise([2.0, 4.0, 3.0]) == [0.0, 1.0, 0.5]
    assert min_max_normalise([5.0, 5.0]) == [1.0, 1.0]
    assert min_max_normalise([]) == []
    with pytest.raises(ValueError):
        min_max_normalise([1.0, math.nan, math.inf])


def test_blend_rerank_mixes_normalised_scores() -> None:
    fused = [("a", 0.05), ("b", 0.03), ("c", 0.01)]
    rerank = {"a": -2.0, "b": 6.0, "c": 2.0}
    blended = blend_rerank(fused, rerank, 0.5)
    by_id = {item.id: item for item in blended}
    assert by_id["a"].score == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)
    assert by_id["b"].score == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    assert by_id["c"].score == pytest.approx(0.5 * 0.0 + 0.5 * 0.5)
    assert [item.id for item in blended] == ["b", "a", "c"]


def test_blend_rerank_extremes() -> None:
    fused = [("a", 0.05), ("b", 0.03), ("c", 0.01)]
    rerank = {"a": 0.1, "b": 0.9, "c": 0.5}
    assert [i.id for i in blend_rerank(fused, rerank, 0.0)] == ["a", "b", "c"]
    assert [i.id for i in blend_rerank(fused, rerank, 1.0)] == ["b", "c", "a"]
    with pytest.raises(ValueError):
        blend_rerank(fused, rerank, 1.2)
    assert blend_rerank([], rerank, 0.5) == []


def test_blend_rerank_unscored_candidates() -> None:
    fused = [("a", 0.05), ("b", 0.04), ("c", 0.01)]
    blended = blend_rerank(fused, {"a": 1.0, "b": 3.0}, 0.55)
    by_id = {item.id: item for item in blended}
    assert not by_id["c"].reranked and by_id["c"].rerank_norm == 0.0
    assert by_id["b"].reranked and by_id["b"].rerank_norm == 1.0
    assert [item.id for item in blended] == ["b", "a", "c"]


@given(
    st.lists(st.floats(-100, 100), min_size=1, max_size=20),
    st.lists(st.floats(-100, 100), min_size=1, max_size=20),
    st.floats(0.0, 1.0),
)
def test_blend_rerank_properties(fused_scores: list[float], rr: list[float], w: float) -> None:
    fused = [(f"m{i}", score) for i, score in enumerate(fused_scores)]
    rerank = {f"m{i}": score for i, score in enumerate(rr)}
    blended = blend_rerank(fused, rerank, w)
    assert sorted(item.id for item in blended) == sorted(i for i, _ in fused)
    for item in blended:
        assert -1e-12 <= item.score <= 1.0 + 1e-12
        assert item.score == pytest.approx((1 - w) * item.fused_norm + w * item.rerank_norm)
    assert [item.score for item in blended] == sorted(
        (item.score for item in blended), reverse=True
    )


# ----------------------------------------------------------------------------- session support


def test_session_rank_boost_lifts_the_turns_of_the_best_ranked_sessions() -> None:
    # "b1" is the best single match, but session A ranks first by whole-session BM25
    scored = [("b1", 1.0), ("a1", 0.9), ("c1", 0.5), ("x", 0.0)]
    session_of = {"b1": "B", "a1": "A", "c1": "C", "x": None}
    boosted = session_rank_boost(scored, session_of, {"A": 0, "B": 1}, weight=0.3, rrf_k=0)
    # min-max normalised (1.0, 0.9, 0.5, 0.0) + 0.3 · (1/1 for A, 1/2 for B, 0 for C)
    assert [i for i, _ in boosted] == ["a1", "b1", "c1", "x"]
    assert [s for _, s in boosted] == pytest.approx([1.2, 1.15, 0.5, 0.0])
    flatter = dict(session_rank_boost(scored, session_of, {"A": 0, "B": 1}, 0.3, rrf_k=3))
    assert flatter["b1"] == pytest.approx(1.0 + 0.3 * 4 / 5)
    # nothing to do: the input comes back unchanged
    assert session_rank_boost(scored, session_of, {"A": 0}, 0.0, 0) == scored
    assert session_rank_boost(scored, session_of, {}, 0.3, 0) == scored
    assert session_rank_boost([], session_of, {"A": 0}, 0.3, 0) == []
    with pytest.raises(ValueError):
        session_rank_boost(scored, session_of, {"A": 0}, math.inf, 0)
    with pytest.raises(ValueError):
        session_rank_boost(scored, session_of, {"A": 0}, 0.3, -1)


@given(
    st.lists(
        st.tuples(st.sampled_from(["s1", "s2", "s3", None]), st.floats(0.0, 1.0)),
        min_size=1,
        max_size=30,
    ),
    st.permutations(["s1", "s2", "s3"]),
    st.floats(0.0, 2.0),
    st.integers(0, 60),
)
def test_session_rank_boost_keeps_every_candidate_and_never_demotes_a_better_session(
    rows, ranking, weight, rrf_k
) -> None:
    scored = sorted(((f"m{n}", s) for n, (_, s) in enumerate(rows)), key=lambda p: -p[1])
    session_of = {f"m{n}": sess for n, (sess, _) in enumerate(rows)}
    rank = {s: r for r, s in enumerate(ranking[:2])}  # the third session is not ranked
    boosted = session_rank_boost(scored, session_of, rank, weight, rrf_k)
    assert sorted(i for i, _ in boosted) == sorted(i for i, _ in scored)
    position = {i: n for n, (i, _) in enumerate(boosted)}
    before = dict(scored)
    lift = {None: 99, **{s: rank.get(s, 99) for s in ranking}}
    for a, _ in scored:
        for b, _ in scored:
            # at least as good a score and at least as good a session: never placed after
            if before[a] > before[b] and lift[session_of[a]] <= lift[session_of[b]]:
                assert position[a] < position[b]


def test_top_peak_is_scale_free_and_zero_when_flat() -> None:
    scores = [0.9, 0.5, 0.45, 0.4, 0.4]
    peak = top_peak(scores, 5)
    assert peak is not None and peak > 1.5
    # shift and scale change nothing; only the best n count
    assert top_peak([10 * x + 3 for x in scores], 5) == pytest.approx(peak)
    assert top_peak([*scores, -100.0], 5) == pytest.approx(peak)
    assert top_peak([2.0, 2.0, 2.0, 2.0], 4) == 0.0  # a flat signal ranks arbitrarily
    assert top_peak([1.0, 0.5], 10) is None  # too few to tell
    assert top_peak([0.5, 0.9, 0.4, 0.45, 0.4], 5) == pytest.approx(peak)  # order-free


def test_signal_reliability_favours_the_signal_that_stands_out() -> None:
    sharp = [0.9, 0.5, 0.45, 0.4, 0.4]
    flat = [3.0, 3.0, 2.9, 2.9, 2.9]  # the best ties with the next: it hardly stands out
    factors = signal_reliability({"vector": sharp, "fulltext": flat, "entity": [1.0] * 5}, 5)
    assert factors["vector"] > factors["fulltext"] > 0.0
    assert factors["entity"] == 0.0  # all ties: abstains
    assert math.fsum(factors.values()) == pytest.approx(3.0)  # the factors average 1
    # a signal with too few scores keeps its weight; all flat or alone: unchanged
    few = signal_reliability({"vector": sharp, "fulltext": [2.0]}, 5)
    assert few["fulltext"] == 1.0 and few["vector"] == pytest.approx(1.0)
    assert signal_reliability({"vector": [1.0] * 4, "fulltext": [2.0] * 4}, 4) == {
        "vector": 1.0,
        "fulltext": 1.0,
    }


def test_session_resolution_fades_as_few_sessions_fill_the_head() -> None:
    assert session_resolution(list("abcdefghijklmnopqrst"), 10) == 1.0  # 20 sessions, k 10
    assert session_resolution(["a"] * 30, 10) == pytest.approx(0.1)  # one session: n_eff 1
    assert session_resolution(list("aabbccddee") * 5, 10) == pytest.approx(0.5)  # five alike
    # unequal shares count less than their number; a memory without a session is its own
    assert session_resolution(["a"] * 8 + ["b", "c"], 4) == pytest.approx(1 / 0.66 / 4)
    assert session_resolution([None] * 10, 10) == pytest.approx(1.0)
    assert session_resolution([], 10) == 1.0
    with pytest.raises(ValueError):
        session_resolution(["a"], 0)
