"""Tests for the pure decision of step ``abstain`` (pipelines.recall.steps.abstain)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.recall.config import DEFAULT_RECALL_CONFIG, AbstentionThresholds
from pipelines.recall.steps.abstain import (
    AbstentionInputs,
    decide_abstention,
    keyword_coverage,
    top_overlap,
)

T = DEFAULT_RECALL_CONFIG.abstention


def _inputs(**overrides: object) -> AbstentionInputs:
    values: dict[str, object] = {
        "top_vector_similarity": 0.45,
        "top_fulltext_score": 3.0,
        "keyword_coverage": 0.8,
        "candidate_count": 20,
        "signal_agreement": 0.4,
    }
    values.update(overrides)
    return AbstentionInputs(**values)  # type: ignore[arg-type]


def test_no_candidates_abstains() -> None:
    decision = decide_abstention(_inputs(candidate_count=0), T)
    assert decision.abstain and decision.reason == "no_candidates"
    assert decision.confidence == 1.0


def test_strong_semantic_match_answers() -> None:
    decision = decide_abstention(
        _inputs(top_vector_similarity=0.75, keyword_coverage=0.0, top_fulltext_score=None), T
    )
    assert not decision.abstain and decision.reason == "strong_semantic_match"


def test_weak_semantic_and_lexical_abstains() -> None:
    decision = decide_abstention(_inputs(top_vector_similarity=0.1, keyword_coverage=0.2), T)
    assert decision.abstain and decision.reason == "weak_semantic_and_lexical_match"


def test_good_evidence_answers() -> None:
    decision = decide_abstention(_inputs(), T)
    assert not decision.abstain and decision.reason == "sufficient_evidence"
    assert decision.evidence >= T.min_evidence
    assert 0.5 <= decision.confidence <= 1.0


def test_mediocre_evidence_abstains() -> None:
    decision = decide_abstention(
        _inputs(
            top_vector_similarity=0.22,
            top_fulltext_score=0.1,
            keyword_coverage=0.4,
            signal_agreement=0.0,
        ),
        T,
    )
    assert decision.abstain and decision.reason == "insufficient_evidence"
    assert decision.evidence < T.min_evidence


def test_missing_signals_are_left_out_of_the_mean() -> None:
    # With only keyword coverage and agreement available, evidence is their weighted mean.
    decision = decide_abstention(
        _inputs(
            top_vector_similarity=None,
            top_fulltext_score=None,
            keyword_coverage=1.0,
            signal_agreement=0.0,
        ),
        T,
    )
    expected = T.weight_keywords / (T.weight_keywords + T.weight_agreement)
    assert decision.evidence == pytest.approx(expected)


def test_thresholds_are_honoured() -> None:
    strict = AbstentionThresholds(min_evidence=0.95)
    assert decide_abstention(_inputs(), strict).abstain
    lenient = AbstentionThresholds(min_evidence=0.0)
    assert not decide_abstention(_inputs(top_vector_similarity=0.21), lenient).abstain


@given(
    st.one_of(st.none(), st.floats(-1.0, 1.0)),
    st.one_of(st.none(), st.floats(0.0, 50.0)),
    st.floats(0.0, 1.0),
    st.integers(0, 100),
    st.floats(0.0, 1.0),
)
def test_decision_properties(
    sim: float | None, fts: float | None, cov: float, count: int, agree: float
) -> None:
    inputs = AbstentionInputs(sim, fts, cov, count, agree)
    decision = decide_abstention(inputs, T)
    assert 0.0 <= decision.evidence <= 1.0
    assert 0.5 <= decision.confidence <= 1.0
    if count == 0:
        assert decision.abstain
    # more vector similarity never turns an answer into an abstention
    if sim is not None and not decision.abstain:
        better = AbstentionInputs(min(1.0, sim + 0.1), fts, cov, count, agree)
        assert not decide_abstention(better, T).abstain


def test_keyword_coverage() -> None:
    texts = ["Caroline went to the LGBTQ support group.", "Melanie's painting"]
    assert keyword_coverage(["Caroline", "support group", "Melanie's"], texts) == 1.0
    assert keyword_coverage(["caroline", "pottery"], texts) == 0.5
    assert keyword_coverage([], texts) == 1.0
    assert keyword_coverage(["x"], []) == 0.0


def test_top_overlap() -> None:
    assert top_overlap(["a", "b", "c"], ["c", "x", "a"], n=5) == pytest.approx(2 / 3)
    assert top_overlap(["a", "b"], ["a"], n=5) == 1.0
    assert top_overlap(["a", "b", "c", "d", "e", "f"], ["f"], n=5) == 0.0
    assert top_overlap([], ["a"]) == 0.0
    with pytest.raises(ValueError):
        top_overlap(["a"], ["a"], n=0)


def test_speaker_mismatch_abstains_even_on_a_strong_match() -> None:
    thresholds = T.model_copy(update={"min_speaker_match": 0.5})
    strong = {"top_vector_similarity": 0.9}
    decision = decide_abstention(_inputs(speaker_match=0.0, **strong), thresholds)
    assert decision.abstain and decision.reason == "speaker_mismatch"
    assert not decide_abstention(_inputs(speaker_match=1.0, **strong), thresholds).abstain
    # no speaker named, or the rule disabled: the other rules decide
    assert not decide_abstention(_inputs(speaker_match=None, **strong), thresholds).abstain
    disabled = T.model_copy(update={"min_speaker_match": 0.0})
    assert not decide_abstention(_inputs(speaker_match=0.0, **strong), disabled).abstain
