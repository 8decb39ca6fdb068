"""Benchmark metrics on hand-computed examples."""

from __future__ import annotations

import pytest

from benchmarks import metrics as M
from benchmarks.metrics import Judged


def test_hit_rr_and_full_recall():
    ranked = ["a", "b", "c", "d"]
    assert not M.hit_at_k(ranked, {"c"}, 2)
    assert M.hit_at_k(ranked, {"c"}, 3)
    assert M.reciprocal_rank(ranked, {"c", "d"}) == pytest.approx(1 / 3)
    assert M.reciprocal_rank(ranked, {"z"}) == 0.0
    assert M.full_recall_at_k(ranked, {"a", "d", "z"}, 4) == pytest.approx(2 / 3)
    assert M.full_recall_at_k(ranked, {"a", "d"}, 1) == pytest.approx(1 / 2)
    with pytest.raises(ValueError):
        M.full_recall_at_k(ranked, set(), 4)


def test_repeated_sessions_count_once_for_full_recall():
    # session level: three turns of the same session do not cover two gold sessions
    assert M.full_recall_at_k(["s1", "s1", "s1"], {"s1", "s2"}, 3) == 0.5
    assert M.reciprocal_rank(["s3", "s1", "s1"], {"s1"}) == 0.5


def test_retrieval_metrics_hand_computed():
    items = [
        # gold at rank 1
        Judged("single", ("g", "x", "y"), frozenset({"g"})),
        # gold at rank 3 (R@1 = 0, R@5 = 1, RR = 1/3)
        Judged("single", ("x", "y", "g"), frozenset({"g"})),
        # multi-evidence: one of two gold at rank 2 (RR = 1/2, FR = 1/2)
        Judged("multi", ("x", "g1", "y"), frozenset({"g1", "g2"})),
        # nothing found
        Judged("multi", ("x", "y"), frozenset({"g1", "g2"})),
        # no gold: not scored
        Judged("single", ("x",), frozenset()),
    ]
    m = M.retrieval_metrics(items, ks=(1, 5, 10))
    assert m["n"] == 4 and m["n_multi"] == 2
    assert m["R@1"] == pytest.approx(1 / 4)
    assert m["R@5"] == pytest.approx(3 / 4)
    assert m["R@10"] == pytest.approx(3 / 4)
    assert m["MRR"] == pytest.approx((1 + 1 / 3 + 1 / 2 + 0) / 4)
    assert m["FR@10"] == pytest.approx((1 / 2 + 0) / 2)
    assert m["FR@10.all"] == pytest.approx((1 + 1 + 1 / 2 + 0) / 4)
    cats = M.by_category(items, ks=(1, 5, 10))
    assert cats["single"]["n"] == 2 and cats["single"]["MRR"] == pytest.approx(2 / 3)
    assert cats["multi"]["R@1"] == 0.0 and cats["multi"]["R@5"] == 0.5


def test_empty_metrics_are_none_not_zero():
    m = M.retrieval_metrics([], ks=(1, 10))
    assert m["n"] == 0 and m["R@10"] is None and m["MRR"] is None and m["FR@10"] is None


def test_abstention():
    # (unanswerable, abstained)
    outcomes = [(True, True), (True, True), (True, False), (False, True), (False, False)] + [
        (False, False)
    ] * 3
    a = M.abstention_metrics(outcomes)
    assert (a["tp"], a["fp"], a["fn"], a["tn"]) == (2, 1, 1, 4)
    assert a["precision"] == pytest.approx(2 / 3)
    assert a["recall"] == pytest.approx(2 / 3)
    assert a["f1"] == pytest.approx(2 / 3)
    assert a["abstain_rate_answerable"] == pytest.approx(1 / 5)
    never = M.abstention_metrics([(True, False), (False, False)])
    assert never["precision"] is None and never["recall"] == 0.0 and never["f1"] is None


def test_context_recall():
    items = [
        (frozenset({"a"}), ["a", "b"]),  # any, all
        (frozenset({"a", "b"}), ["a"]),  # any, not all, frac 1/2
        (frozenset({"c"}), ["a"]),  # none
        (frozenset(), ["a"]),  # no gold: excluded
    ]
    c = M.context_recall(items)
    assert c["n"] == 3
    assert c["any"] == pytest.approx(2 / 3)
    assert c["all"] == pytest.approx(1 / 3)
    assert c["frac"] == pytest.approx((1 + 0.5 + 0) / 3)


def test_percentiles():
    assert M.percentile([], 50) is None
    assert M.percentile([5.0], 95) == 5.0
    assert M.percentile([1, 2, 3, 4], 50) == pytest.approx(2.5)
    assert M.percentile(list(range(101)), 95) == pytest.approx(95)
    s = M.latency_summary([10.0, 20.0, 30.0])
    assert s["p50_ms"] == 20.0 and s["n"] == 3 and s["max_ms"] == 30.0
