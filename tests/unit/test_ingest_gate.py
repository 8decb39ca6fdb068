"""Tests for pipelines.ingest.gate (encoding gate signals and decisions)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.ingest.config import GateConfig
from pipelines.ingest.gate import (
    DuplicateCandidate,
    DuplicateMatch,
    GateSignals,
    compute_signals,
    decide,
    near_duplicate,
    novelty,
    prediction_error,
    salience,
    salience_features,
)

CONTEXT = [
    "I went to a LGBTQ support group yesterday and it was so powerful.",
    "My sister Emma lives in Boston with her husband and their two dogs.",
    "We decided to use Neo4j with the Graph Data Science plugin for the memory server.",
]
ON = GateConfig(enabled=True)


# --------------------------------------------------------------------------- novelty


def test_novelty_edge_cases() -> None:
    assert novelty("A completely new statement about sailing to Crete.", []) == 1.0
    assert novelty("A completely new statement about sailing to Crete.", ["", "  "]) == 1.0
    assert novelty("ok", CONTEXT) == 0.05  # trivially short
    assert novelty("A new statement about sailing.", CONTEXT, max_context_chars=0) == 1.0


def test_novelty_orders_repetition_below_new_information() -> None:
    repeated = novelty(CONTEXT[1], CONTEXT)
    paraphrase = novelty("My sister Emma lives in Boston with her husband.", CONTEXT)
    new = novelty("Tomorrow I fly to Reykjavik for a geology conference on volcanoes.", CONTEXT)
    assert repeated < 0.2
    assert paraphrase < 0.3
    assert new > 0.6
    assert repeated < new and paraphrase < new


def test_novelty_uses_only_the_recent_window() -> None:
    text = "My sister Emma lives in Boston with her husband and their two dogs."
    filler = "zq" * 20_000  # incompressible enough, and longer than the window
    assert novelty(text, [text, filler], max_context_chars=30_000) > 0.5
    assert novelty(text, [filler, text], max_context_chars=30_000) < 0.2


@given(st.text(max_size=200), st.lists(st.text(max_size=200), max_size=4))
def test_novelty_is_bounded(text: str, context: list[str]) -> None:
    assert 0.0 <= novelty(text, context) <= 1.0


# --------------------------------------------------------------------------- salience


@pytest.mark.parametrize("noise", ["ok", "lol", "thanks!", "Haha", "sounds good", "k"])
def test_noise_has_minimal_salience(noise: str) -> None:
    assert salience(noise) == pytest.approx(0.02)


def test_short_speech_acts() -> None:
    assert salience_features("I'll send it tomorrow") == {"commitment": 0.8}
    assert salience_features("Actually it was Tuesday") == {"correction": 0.6}
    assert salience_features("Where did you go?") == {"question": 0.2}
    assert salience("") == 0.0


def test_long_messages_score_information_density() -> None:
    rich = (
        "We decided to migrate the billing service to Kubernetes in March 2025 with Priya and "
        "the Platform team, and I'm so excited!"
    )
    bland = "it was kind of a long day and then we just sat around for a while doing stuff"
    features = salience_features(rich)
    assert {"entities", "numbers", "commitment", "emotion", "length"} <= features.keys()
    assert salience(rich) > 0.7
    assert salience(bland) < 0.25
    assert salience(bland) >= 0.1  # above the floor: plain content is not noise


@given(st.text(max_size=400))
def test_salience_is_bounded(text: str) -> None:
    assert 0.0 <= salience(text) <= 1.0


# --------------------------------------------------------------------------- prediction error


def test_prediction_error() -> None:
    e = np.array([1.0, 0.0, 0.0])
    assert prediction_error(e, []) == 1.0
    assert prediction_error(e, np.empty((0, 3))) == 1.0
    assert prediction_error(e, [[2.0, 0.0, 0.0]]) == pytest.approx(0.0)
    assert prediction_error(e, [[0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]) == pytest.approx(
        1 - 1 / math.sqrt(2)
    )
    assert prediction_error(e, [[-1.0, 0.0, 0.0]]) == 1.0  # clipped
    assert prediction_error(e, [[0.0, 0.0, 0.0]]) == 1.0  # zero vector: cosine 0
    with pytest.raises(ValueError, match="dimension"):
        prediction_error(e, [[1.0, 0.0]])


# --------------------------------------------------------------------------- near duplicates


def _vec(*values: float) -> np.ndarray:
    return np.array(values, dtype=float)


def test_near_duplicate_needs_embedding_and_lexical_agreement() -> None:
    query = _vec(1.0, 0.0, 0.0)
    close = _vec(0.99, 0.1, 0.0)
    far = _vec(0.0, 1.0, 0.0)
    candidates = [
        DuplicateCandidate("far", "My sister Emma lives in Boston", far),
        DuplicateCandidate("close-other-words", "Emma has a flat near the harbour", close),
        DuplicateCandidate("dup", "my sister Emma lives in Boston now", close),
    ]
    match = near_duplicate(query, "My sister Emma lives in Boston.", candidates)
    assert match is not None and match.id == "dup"
    assert match.cosine > 0.99 and match.lexical >= 0.6


@pytest.mark.parametrize(
    ("incoming", "stored"),
    [
        ("The meeting is at 3pm on 5 May", "The meeting is at 4pm on 5 May"),
        ("I like spicy food a lot", "I don't like spicy food a lot"),
        ("I live in Paris with my cat", "I live in London with my cat"),
        ("i live in paris with my cat", "i live in london with my cat"),
        ("Emma moved to Boston", "Priya moved to Boston"),
    ],
)
def test_near_duplicate_never_merges_different_facts(incoming: str, stored: str) -> None:
    same = _vec(1.0, 0.0)  # even with identical embeddings
    assert near_duplicate(same, incoming, [DuplicateCandidate("x", stored, same)]) is None


def test_near_duplicate_exact_text_ignores_embeddings() -> None:
    match = near_duplicate(
        _vec(1.0, 0.0), "I love jazz!", [DuplicateCandidate("x", "i love JAZZ", _vec(0.0, 1.0))]
    )
    assert match is not None and match.id == "x"


def test_near_duplicate_picks_the_closest_and_respects_thresholds() -> None:
    e = _vec(1.0, 0.0)
    candidates = [
        DuplicateCandidate("a", "I really love jazz music", _vec(0.95, 0.3)),
        DuplicateCandidate("b", "I love jazz music so much", _vec(0.99, 0.05)),
    ]
    match = near_duplicate(e, "I love jazz music", candidates)
    assert match is not None and match.id == "b"
    assert (
        near_duplicate(e, "I love jazz music", candidates, GateConfig(merge_similarity=1.0)) is None
    )
    assert near_duplicate(e, "I love jazz music", []) is None


# --------------------------------------------------------------------------- decide


def test_force_bypasses_everything() -> None:
    signals = GateSignals(novelty=0.0, salience=0.0, prediction_error=0.0)
    decision = decide(signals, ON, force=True)
    assert decision.decision == "stored"
    assert decision.reason == "forced"
    assert decision.signals["score"] == 0.0


def test_disabled_gate_stores_everything_but_reports_signals() -> None:
    dup = DuplicateMatch("m1", 0.99, 0.9)
    signals = GateSignals(novelty=0.01, salience=0.02, prediction_error=0.0, duplicate=dup)
    decision = decide(signals)  # default config: disabled
    assert decision.decision == "stored"
    assert "disabled" in decision.reason
    assert decision.signals["duplicate_of"] == "m1"
    assert decision.merge_target is None


def test_duplicates_are_merged_with_a_target() -> None:
    dup = DuplicateMatch("m1", 0.97, 0.8)
    decision = decide(GateSignals(0.9, 0.9, 0.9, duplicate=dup), ON)
    assert decision.decision == "merged"
    assert decision.merge_target == "m1"
    assert "m1" in decision.reason and "0.970" in decision.reason


def test_salience_and_novelty_floors() -> None:
    low_salience = decide(GateSignals(novelty=1.0, salience=0.05, prediction_error=1.0), ON)
    assert low_salience.decision == "rejected"
    assert "salience" in low_salience.reason and "floor" in low_salience.reason
    cfg = GateConfig(enabled=True, novelty_floor=0.2)
    redundant = decide(GateSignals(novelty=0.1, salience=0.9, prediction_error=0.9), cfg)
    assert redundant.decision == "rejected" and "novelty" in redundant.reason


def test_surprise_bypass_and_weighted_threshold() -> None:
    surprising = decide(GateSignals(novelty=0.1, salience=0.15, prediction_error=0.8), ON)
    assert surprising.decision == "stored" and "bypass" in surprising.reason
    # score = (0.25*0.3 + 0.2*0.3 + 0.3*0.3) / 0.75 = 0.3 -> exactly the threshold
    at_threshold = decide(GateSignals(0.3, 0.3, 0.3), ON)
    assert at_threshold.decision == "stored"
    assert at_threshold.signals["score"] == pytest.approx(0.3)
    below = decide(GateSignals(0.2, 0.3, 0.2), ON)
    assert below.decision == "rejected" and "below threshold" in below.reason


def test_category_offsets_lower_the_bar_for_decisions() -> None:
    def verdict(score: float, category: str | None) -> str:
        return decide(GateSignals(score, score, score, category=category), ON).decision

    assert verdict(0.27, None) == "rejected"  # threshold 0.30
    assert verdict(0.27, "decision") == "stored"  # threshold 0.26
    assert verdict(0.25, "decision") == "rejected"
    assert verdict(0.25, "correction") == "stored"  # threshold 0.24
    signals = decide(GateSignals(0.27, 0.27, 0.27, category="decision"), ON).signals
    assert signals["threshold"] == pytest.approx(0.26)
    assert signals["category"] == "decision"


def test_missing_prediction_error_fails_open_and_says_so() -> None:
    decision = decide(GateSignals(novelty=0.5, salience=0.5, prediction_error=None), ON)
    assert decision.decision == "stored"
    assert decision.signals["prediction_error"] is None
    assert decision.signals["score"] == pytest.approx(0.5)
    assert "prediction error unavailable" in decision.reason
    only_pe = GateConfig(enabled=True, novelty_weight=0, salience_weight=0)
    assert decide(GateSignals(0.0, 0.5, None), only_pe).decision == "stored"


def test_non_finite_signals_are_an_error_not_a_silent_decision() -> None:
    with pytest.raises(ValueError, match="novelty"):
        decide(GateSignals(novelty=math.nan, salience=0.5, prediction_error=0.5), ON)


@given(
    st.floats(0, 1),
    st.floats(0, 1),
    st.one_of(st.none(), st.floats(0, 1)),
    st.sampled_from([None, "decision", "fact", "correction"]),
    st.booleans(),
    st.booleans(),
)
def test_every_decision_has_a_reason(
    n: float, s: float, pe: float | None, category: str | None, enabled: bool, force: bool
) -> None:
    decision = decide(GateSignals(n, s, pe, category), GateConfig(enabled=enabled), force=force)
    assert decision.reason
    assert decision.decision in {"stored", "rejected"}
    assert 0.0 <= float(decision.signals["score"] or 0.0) <= 1.0
    assert (decision.merge_target is None) == (decision.decision != "merged")
    if force or not enabled:
        assert decision.decision == "stored"


def test_decision_is_json_serialisable() -> None:
    decision = decide(GateSignals(0.5, 0.5, 0.5, duplicate=None), ON)
    assert '"decision":"stored"' in decision.model_dump_json()


# --------------------------------------------------------------------------- compute_signals


def test_compute_signals_end_to_end() -> None:
    rng = np.random.default_rng(7)
    recent = rng.normal(size=(3, 8))
    text = CONTEXT[1]
    signals = compute_signals(
        text,
        recent[1] + 0.01,
        context_texts=CONTEXT,
        recent_embeddings=recent,
        candidates=[DuplicateCandidate("m2", CONTEXT[1], recent[1])],
        config=ON,
    )
    assert signals.novelty < 0.2
    assert signals.prediction_error is not None and signals.prediction_error < 0.01
    assert signals.duplicate is not None and signals.duplicate.id == "m2"
    assert decide(signals, ON).decision == "merged"


def test_compute_signals_without_embedding() -> None:
    signals = compute_signals(
        "I LOVE jazz",
        None,
        candidates=[DuplicateCandidate("x", "i love jazz!", [1.0, 0.0])],
    )
    assert signals.prediction_error is None
    assert signals.duplicate == DuplicateMatch("x", 1.0, 1.0)
    fresh = compute_signals("Tomorrow I start a pottery class in Lisbon.", None)
    assert fresh.novelty == 1.0 and fresh.duplicate is None
