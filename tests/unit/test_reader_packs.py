"""Blinding and un-blinding pieces of the reader-judged benchmark (pure): labels, batches that
never hold a question twice, grade validation and the paired counts."""

from __future__ import annotations

import random

import pytest

from benchmarks.reader_packs import Keyed, PackError, batches, by_label, new_labels
from benchmarks.reader_report import answer_score, unblind


def test_labels_are_distinct_hex_and_seeded():
    a = new_labels(500, random.Random(1))
    assert len(set(a)) == 500 and all(len(x) == 8 and int(x, 16) >= 0 for x in a)
    assert a == new_labels(500, random.Random(1)) and a != new_labels(500, random.Random(2))


def test_batches_never_hold_a_question_twice():
    labels = new_labels(4 * 23, random.Random(3))
    group = {label: f"q{i // 4}" for i, label in enumerate(labels)}  # 4 prompts per question
    got = batches(labels, group, 20, random.Random(4))
    assert sorted(x for b in got for x in b) == sorted(labels)
    assert len(got) == 5 and max(map(len, got)) - min(map(len, got)) <= 1
    for b in got:
        assert len({group[x] for x in b}) == len(b)
    # more prompts of one question than batches of the size asked: more batches, still apart
    few = batches(labels[:4], group, 20, random.Random(4))
    assert len(few) == 4 and all(len(b) == 1 for b in few)
    with pytest.raises(ValueError):
        batches(labels, group, 0, random.Random(4))


def _key(label: str, q: str, condition: str, category: str = "x") -> Keyed:
    return Keyed(q, "c", category, condition, 2000, "s", "?", 10)


def test_grades_are_validated_and_unblinded():
    key = {
        "a1": _key("a1", "q1", "mnemograph"),
        "b1": _key("b1", "q1", "dense-rag"),
        "a2": _key("a2", "q2", "mnemograph", "y"),
        "b2": _key("b2", "q2", "dense-rag", "y"),
        "a3": _key("a3", "q3", "mnemograph"),
    }
    assert answer_score("a1", {"nugget_scores": [1, 0.5], "score": 0.75}) == (0.75, True)
    assert answer_score("a1", {"nugget_scores": [1, 0], "score": 1}) == (0.5, False)
    for bad in ({"nugget_scores": []}, {"nugget_scores": [0.7]}, {"nugget_scores": "1"}):
        with pytest.raises(PackError):
            answer_score("a1", bad)
    with pytest.raises(PackError, match="twice"):
        by_label([{"label": "a1"}, {"label": "a1"}], key, "grades")
    with pytest.raises(PackError, match="not in the key"):
        by_label([{"label": "zz"}], key, "grades")
    grades = {
        "a1": {"nugget_scores": [1], "score": 1},
        "b1": {"nugget_scores": [0], "score": 0},
        "a2": {"nugget_scores": [0.5], "score": 0.5},
        "b2": {"nugget_scores": [0.5], "score": 0.5},
        "a3": {"nugget_scores": [1], "score": 1},  # its pair is missing: not a pair
    }
    r = unblind(key, grades)
    b = r["budgets"]["2000"]
    assert (b["wins"], b["losses"], b["ties"], b["pairs"]) == (1, 0, 1, 2)
    assert b["mnemograph"] == {"n": 3, "mean": pytest.approx(2.5 / 3, abs=1e-4)}
    assert b["dense-rag"] == {"n": 2, "mean": 0.25}
    assert b["mean_difference"] == 0.5 and b["sign_test_p"] == 1.0
    assert b["by_ability"]["y"]["ties"] == 1 and b["by_ability"]["x"]["wins"] == 1
    assert r["graded"] == 5 and r["ungraded"] == 0 and r["score_disagreements"] == 0
