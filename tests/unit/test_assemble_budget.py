"""Tests for window-adaptive budgets and the phase split."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.assemble.config import AssemblyConfig
from pipelines.prompt.budget import allocate_phase_budgets, assembly_budget, split_budget
from pipelines.prompt.tokens import window_ceiling


def test_window_ceiling_is_exact_on_decimal_headroom() -> None:
    assert window_ceiling(100, 0.29) == 29  # float math would give 28
    assert window_ceiling(4096, 0.75) == 3072
    with pytest.raises(ValueError):
        window_ceiling(100, 0.0)


@pytest.mark.parametrize(
    ("window", "reserved", "expected"),
    [
        (4096, 0, 3072),
        (4096, 500, 2572),
        (200_000, 1_000, 149_000),  # adapts to large windows
        (4096, 3000, 300),  # the min_budget floor
        (1000, 900, 36),  # ...but never past W - safety_margin - reserved
        (100, 100, 0),
    ],
)
def test_assembly_budget(window: int, reserved: int, expected: int) -> None:
    assert assembly_budget(window, reserved_tokens=reserved) == expected


def test_assembly_budget_respects_config() -> None:
    config = AssemblyConfig(headroom=0.8, min_budget=0)
    assert assembly_budget(10_000, config=config) == 8_000
    assert assembly_budget(10_000, headroom=0.5, config=config) == 5_000


def test_split_budget_examples() -> None:
    assert split_budget(1000) == (600, 300, 100)
    assert split_budget(7) == (4, 2, 1)  # 4.2, 2.1, 0.7 -> largest remainder to phase 3
    assert split_budget(0) == (0, 0, 0)


@given(total=st.integers(0, 10**6), weights=st.tuples(*[st.integers(0, 100)] * 3))
def test_split_budget_is_exact_and_proportional(total: int, weights: tuple[int, int, int]) -> None:
    if sum(weights) == 0:
        return
    split = tuple(w / sum(weights) for w in weights)
    parts = split_budget(total, split)
    assert sum(parts) == total
    for part, share in zip(parts, split, strict=True):
        assert abs(part - total * share) < 1 + 1e-6


def test_unused_budget_flows_forward_then_back() -> None:
    # Phase 1 needs little: its surplus goes to phases 2 and 3.
    alloc = allocate_phase_budgets(1000, demands=(100, 700, 300))
    assert alloc.shares == (600, 300, 100)
    assert alloc.granted == (100, 700, 200)
    assert alloc.cut == (False, False, True)
    # Phases 2 and 3 need little: what is left comes back to phase 1.
    alloc = allocate_phase_budgets(1000, demands=(900, 50, 0))
    assert alloc.granted == (900, 50, 0) and alloc.unused == 50
    alloc = allocate_phase_budgets(1000, demands=(2000, 50, 10))
    assert alloc.granted == (940, 50, 10) and alloc.unused == 0


@given(total=st.integers(0, 10_000), demands=st.tuples(*[st.integers(0, 10_000)] * 3))
def test_allocation_invariants(total: int, demands: tuple[int, int, int]) -> None:
    alloc = allocate_phase_budgets(total, demands)
    assert sum(alloc.granted) + alloc.unused == total
    for granted, demand, share in zip(alloc.granted, demands, alloc.shares, strict=True):
        assert granted <= demand
        assert granted >= min(demand, share)
    if alloc.unused > 0:
        assert alloc.granted == demands
