"""Merge planning (pure): star clusters, the gate's near-duplicate rule, undo bookkeeping."""

from datetime import UTC, datetime, timedelta

import numpy as np

from pipelines.consolidate.config import MergeConfig
from pipelines.consolidate.merge import (
    MemoryInfo,
    absorbed_counters,
    plan_merges,
    qualifies,
    restore_map,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)
CFG = MergeConfig()


def vec(seed, noise=0.0, base=None):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(16) if base is None else base + noise * rng.standard_normal(16)
    return (v / np.linalg.norm(v)).tolist()


BASE = np.asarray(vec(1))


def info(mid, text, minutes, emb=None, speaker="Ann", role="user", kind="turn"):
    return MemoryInfo(
        id=mid,
        text=text,
        speaker=speaker,
        role=role,
        kind=kind,
        event_time=T0 + timedelta(minutes=minutes),
        ingested_at=T0,
        embedding=emb if emb is not None else BASE.tolist(),
    )


def test_star_cluster_keeps_the_earliest_as_canonical():
    infos = {
        "b": info("b", "I went to the support group yesterday, it was powerful", 5),
        "a": info("a", "I went to the support group yesterday and it was powerful", 1),
        "c": info("c", "I went to the support group yesterday; it was powerful!", 9),
    }
    plans = plan_merges(infos, [("b", "a"), ("c", "b")], CFG)
    assert len(plans) == 1
    assert plans[0].canonical == "a"
    # c is only linked to b, never chained through it
    assert plans[0].duplicates == ("b",)


def test_full_star():
    infos = {
        m: info(m, "I went to the support group yesterday and it was powerful", i)
        for i, m in enumerate("abc")
    }
    plans = plan_merges(infos, [("a", "b"), ("a", "c"), ("b", "c")], CFG)
    assert [(p.canonical, p.duplicates) for p in plans] == [("a", ("b", "c"))]


def test_gate_rule_guards_changed_facts():
    a = info("a", "I live in Paris", 0)
    assert qualifies(a, info("b", "I live in London", 1), CFG) is None  # names differ
    assert qualifies(info("x", "Meet at 3pm", 0), info("y", "Meet at 4pm", 1), CFG) is None
    assert qualifies(info("p", "I like it", 0), info("q", "I don't like it", 1), CFG) is None
    far = info("f", "I really live in Paris", 1, emb=vec(99))
    assert qualifies(a, far, CFG) is None  # embeddings not close
    same = info("g", "i live in paris", 1, emb=vec(99))
    assert qualifies(a, same, CFG) is not None  # the same normalised text always qualifies
    assert qualifies(a, info("s", "I live in Paris", 1, speaker="Bob"), CFG) is None
    assert qualifies(a, info("t", "I live in Paris!", 2), CFG) is not None


def test_blocked_pairs_are_not_merged():
    infos = {m: info(m, "same words here again", i) for i, m in enumerate("ab")}
    assert plan_merges(infos, [("a", "b")], CFG, blocked=[frozenset("ab")]) == []
    assert len(plan_merges(infos, [("a", "b")], CFG)) == 1


def test_absorbed_counters_and_restore():
    canonical = {"restatements": None, "access_count": 2, "heat": 0.4, "importance": 0.5}
    dups = [
        {"restatements": 1, "access_count": 1, "heat": 0.9, "importance": 0.3},
        {"restatements": None, "access_count": 0, "heat": None, "importance": 0.7},
    ]
    after = absorbed_counters(canonical, dups)
    assert after == {"restatements": 3, "access_count": 3, "heat": 0.9, "importance": 0.7}
    restore, kept = restore_map(after, canonical, after)
    assert restore == canonical and kept == []
    touched = {**after, "access_count": 4}  # recalled after the merge
    restore, kept = restore_map(touched, canonical, after)
    assert "access_count" not in restore and kept == ["access_count"]


def test_lexical_blocking_is_exact_for_the_rule():
    from pipelines.consolidate.merge import LexicalRecord, lexical_pairs

    def rec(mid, text, minute, speaker="Ann", fresh=True):
        row = {"id": mid, "text": text, "speaker": speaker, "role": "user", "kind": "turn"}
        return LexicalRecord.from_row({**row, "event_ms": minute, "ingested_ms": 0, "fresh": fresh})

    records = [
        rec("a", "I went to the support group yesterday and it was powerful", 1),
        rec("b", "I went to the support group yesterday, it was powerful!", 2),
        rec("c", "i went to the support group yesterday and it was powerful", 3),  # same text
        rec("d", "I went to the support group in Paris yesterday", 4),  # a name differs
        rec("e", "I went to the support group yesterday and it was powerful", 5, speaker="Bob"),
        rec("f", "The weather is nice today in the mountains", 6),
    ]
    pairs = lexical_pairs(records, 0.6)
    assert ("a", "c") in pairs and ("a", "b") in pairs
    assert not any("d" in p or "e" in p or "f" in p for p in pairs)
    # with a watermark only pairs involving a fresh memory are kept
    stale = [
        rec(r.id, "I went to the support group yesterday and it was powerful", i, fresh=False)
        for i, r in enumerate(records[:2])
    ]
    assert lexical_pairs(stale, 0.6) == set()
    assert lexical_pairs(
        [*stale, rec("z", "I went to the support group yesterday and it was powerful", 9)], 0.6
    ) == {("a", "z")}  # identical texts join the earliest of their text
