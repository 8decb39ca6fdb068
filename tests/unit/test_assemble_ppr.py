"""Tests for Personalized PageRank and Phase-2 memory scoring."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.assemble.related import (
    combine_seed_runs,
    memories_without_entities,
    seed_weights_from_memories,
    top_entities,
)
from tests.ppr_reference import personalized_pagerank, score_memories

TIGHT = {"max_iterations": 2000, "tolerance": 1e-13}


def test_path_graph_matches_hand_derived_closed_form() -> None:
    # A - B - C, unit weights, restart at A.  With d the damping:
    #   r_A = (1-d) + d r_B / 2,  r_B = d (r_A + r_C),  r_C = d r_B / 2
    # => r_A = (1-d)(1 - d^2/2) / (1 - d^2),  r_B = d r_A / (1 - d^2/2),  r_C = d r_B / 2.
    d = Fraction(17, 20)
    r_a = (1 - d) * (1 - d * d / 2) / (1 - d * d)
    r_b = d * r_a / (1 - d * d / 2)
    r_c = d * r_b / 2
    assert r_a + r_b + r_c == 1
    scores = personalized_pagerank(
        ["A", "B", "C"], [("A", "B", 1.0), ("B", "C", 1.0)], {"A": 1.0}, damping=0.85, **TIGHT
    )
    assert scores == pytest.approx({"A": float(r_a), "B": float(r_b), "C": float(r_c)}, abs=1e-12)
    assert scores["A"] == pytest.approx(0.345270, abs=1e-6)


def test_star_graph_closed_form() -> None:
    # Restart at the centre of a k-leaf star: r_c = 1/(1+d), each leaf d / (k (1+d)).
    k, d = 4, 0.85
    leaves = [f"L{i}" for i in range(k)]
    scores = personalized_pagerank(
        ["C", *leaves], [("C", leaf, 2.5) for leaf in leaves], {"C": 1.0}, damping=d, **TIGHT
    )
    assert scores["C"] == pytest.approx(1 / (1 + d), abs=1e-12)
    for leaf in leaves:
        assert scores[leaf] == pytest.approx(d / (k * (1 + d)), abs=1e-12)


def test_weighted_triangle_matches_the_linear_system() -> None:
    nodes = ["x", "y", "z"]
    edges = [("x", "y", 3.0), ("y", "z", 1.0), ("x", "z", 1.0)]
    d = 0.85
    # P[u, v] = w(u, v) / strength(u); r = (1-d) (I - d P^T)^-1 s
    w = np.array([[0, 3, 1], [3, 0, 1], [1, 1, 0]], dtype=float)
    p = w / w.sum(axis=1, keepdims=True)
    s = np.array([0.25, 0.0, 0.75])
    expected = (1 - d) * np.linalg.solve(np.eye(3) - d * p.T, s)
    scores = personalized_pagerank(nodes, edges, {"x": 1.0, "z": 3.0}, damping=d, **TIGHT)
    assert [scores[n] for n in nodes] == pytest.approx(list(expected), abs=1e-12)
    assert sum(scores.values()) == pytest.approx(1.0)


def test_dangling_policies() -> None:
    nodes = ["a", "b", "iso"]
    edges = [("a", "b", 1.0)]
    kept = personalized_pagerank(nodes, edges, {"a": 1.0, "iso": 1.0}, **TIGHT)
    assert sum(kept.values()) == pytest.approx(1.0)  # mass returns to the seeds
    dropped = personalized_pagerank(nodes, edges, {"a": 1.0, "iso": 1.0}, dangling="drop", **TIGHT)
    assert dropped["iso"] == pytest.approx(0.5 * 0.15)  # restart mass only, then it leaks
    assert sum(dropped.values()) < 1.0


@st.composite
def _graphs(draw: st.DrawFn) -> tuple[list[int], list[tuple[int, int, float]], dict[int, float]]:
    n = draw(st.integers(2, 7))
    weight = st.floats(0.1, 5.0)
    edges = [(i, i + 1, draw(weight)) for i in range(n - 1)]  # connected backbone
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=6))
    edges += [(u, v, draw(weight)) for u, v in extra]
    seeds = draw(st.dictionaries(st.integers(0, n - 1), st.floats(0.1, 10.0), min_size=1))
    return list(range(n)), edges, seeds


@settings(max_examples=40, deadline=None)
@given(graph=_graphs(), dangling=st.sampled_from(["seeds", "drop"]))
def test_combining_single_seed_runs_equals_the_multi_seed_run(
    graph: tuple[list[int], list[tuple[int, int, float]], dict[int, float]], dangling: str
) -> None:
    nodes, edges, seeds = graph
    single = {
        seed: personalized_pagerank(nodes, edges, {seed: 1.0}, dangling=dangling, **TIGHT)
        for seed in seeds
    }
    combined = combine_seed_runs(single, seeds)
    direct = personalized_pagerank(nodes, edges, seeds, dangling=dangling, **TIGHT)
    assert combined == pytest.approx(direct, abs=1e-9)


def test_combination_with_an_isolated_seed_is_exact_only_when_dropping() -> None:
    nodes, edges, seeds = ["a", "b", "iso"], [("a", "b", 1.0)], {"a": 1.0, "iso": 1.0}
    for policy, exact in (("drop", True), ("seeds", False)):
        single = {s: personalized_pagerank(nodes, edges, {s: 1.0}, dangling=policy, **TIGHT)
                  for s in seeds}  # fmt: skip
        direct = personalized_pagerank(nodes, edges, seeds, dangling=policy, **TIGHT)
        same = combine_seed_runs(single, seeds) == pytest.approx(direct, abs=1e-9)
        assert same is exact


def test_combine_seed_runs_validation() -> None:
    runs = {"a": {"x": 0.5, "y": 0.5}, "b": {"y": 1.0}}
    assert combine_seed_runs(runs, {"a": 3.0, "b": 1.0, "c": 0.0}) == pytest.approx(
        {"x": 0.375, "y": 0.625}
    )
    with pytest.raises(ValueError, match="no single-seed run"):
        combine_seed_runs(runs, {"zzz": 1.0})
    assert combine_seed_runs(runs, {}) == {}


def test_ppr_input_validation() -> None:
    with pytest.raises(ValueError, match="not a node"):
        personalized_pagerank(["a"], [], {"b": 1.0})
    with pytest.raises(ValueError, match="positive"):
        personalized_pagerank(["a"], [], {"a": 0.0})
    with pytest.raises(ValueError, match="non-negative"):
        personalized_pagerank(["a", "b"], [("a", "b", -1.0)], {"a": 1.0})
    with pytest.raises(ValueError, match="outside"):
        personalized_pagerank(["a"], [("a", "q", 1.0)], {"a": 1.0})


def test_seed_weights_count_memories_per_entity() -> None:
    weights = seed_weights_from_memories(
        {"m1": ["redis", "api", "redis"], "m2": ["redis"], "m3": []}
    )
    assert weights == pytest.approx({"redis": 2 / 3, "api": 1 / 3})
    assert seed_weights_from_memories({"m1": []}) == {}
    assert memories_without_entities({"m1": ["e"], "m2": [], "m3": ()}) == ["m2", "m3"]


def test_score_memories_sums_distinct_entity_mass_and_excludes_current_stage() -> None:
    mass = {"redis": 0.5, "api": 0.3, "tea": 0.0}
    memories = {
        "cur": ["redis"],
        "a": ["redis", "redis", "api"],
        "b": ["api"],
        "c": ["tea", "unknown"],
        "d": ["redis"],
    }
    ranked = score_memories(mass, memories, exclude={"cur"})
    assert ranked == [("a", pytest.approx(0.8)), ("d", 0.5), ("b", 0.3)]
    assert score_memories(mass, memories, exclude={"cur"}, limit=1) == [("a", pytest.approx(0.8))]


def test_top_entities() -> None:
    assert top_entities({"a": 0.1, "b": 0.5, "c": 0.0, "d": 0.5}, 2) == {"b": 0.5, "d": 0.5}
