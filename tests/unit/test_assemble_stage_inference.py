"""Tests for the density gate."""

from __future__ import annotations

import pytest

from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.stage import density_gate


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
