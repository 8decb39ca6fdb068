"""Tests for current-stage inference and the density gate."""

from __future__ import annotations

import pytest

from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.stage_inference import (
    StageEvidence,
    density_gate,
    infer_stage,
    stage_score,
)


def test_clear_winner() -> None:
    choice = infer_stage(
        [
            StageEvidence("s1", 0.9, 0.6, 0.8, recency=1),
            StageEvidence("s2", 0.5, 0.3, 0.4, recency=2),
        ]
    )
    assert choice.stage == "s1"
    assert not choice.fallback and not choice.tie_broken_by_recency
    assert choice.runner_up == "s2"
    assert choice.margin == pytest.approx(0.81 - 0.43)  # 0.5·0.9+0.2·0.6+0.3·0.8 vs 0.43
    assert "'s1'" in choice.reasoning


def test_ties_go_to_the_most_recent_stage() -> None:
    choice = infer_stage(
        [
            StageEvidence("old", 0.800, recency=1),
            StageEvidence("new", 0.795, recency=5),
            StageEvidence("mid", 0.500, recency=3),
        ]
    )
    assert choice.stage == "new"
    assert choice.tie_broken_by_recency
    assert "most recent" in choice.reasoning


def test_weak_evidence_falls_back_to_the_most_recent_stage() -> None:
    choice = infer_stage([StageEvidence("a", 0.1, recency=1), StageEvidence("b", 0.05, recency=2)])
    assert choice.stage == "b" and choice.fallback


def test_no_evidence() -> None:
    assert infer_stage([]).stage is None
    choice = infer_stage([StageEvidence("a", recency=1), StageEvidence("b", recency=0)])
    assert choice.stage == "a" and choice.fallback and choice.scores == {}
    with pytest.raises(ValueError, match="unique"):
        infer_stage([StageEvidence("a"), StageEvidence("a")])


def test_missing_signals_are_renormalised_not_penalised() -> None:
    config = AssemblyConfig()
    only_max = StageEvidence("a", max_similarity=0.7)
    assert stage_score(only_max, config) == pytest.approx(0.7)
    full = StageEvidence("b", 0.8, 0.4, 0.6)
    assert stage_score(full, config) == pytest.approx(0.5 * 0.8 + 0.2 * 0.4 + 0.3 * 0.6)


def test_density_gate() -> None:
    sparse = density_gate(94, 5, dimensions=384)  # rho ~0.24: flat recall
    assert not sparse.use_stages and sparse.memories_per_stage == pytest.approx(18.8)
    assert "per embedding dimension" in sparse.reason
    assert not density_gate(94, 5, AssemblyConfig(density_min_memories_per_stage=50)).use_stages
    assert density_gate(768, 5, dimensions=384).use_stages  # rho = 2
    assert not density_gate(767, 5, dimensions=384).use_stages
    assert not density_gate(900, 100, dimensions=384).use_stages  # 9 per stage
    dense = density_gate(7500, 50)  # 150 per stage: stage-aware assembly
    assert dense.use_stages
    assert not density_gate(10_000, 1).use_stages  # one stage: nothing to scope
    assert density_gate(100, 2, AssemblyConfig(density_min_memories_per_stage=10)).use_stages
