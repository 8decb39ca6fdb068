"""Tests for pipelines.recall.heat."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.recall.heat import effective_heat, heat_after_access, recency_score, touch

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
unit = st.floats(0.0, 1.0)
ages = st.floats(0.0, 10_000.0)


def test_recency_half_life() -> None:
    half = timedelta(days=30)
    assert recency_score(NOW, NOW, half) == 1.0
    assert recency_score(NOW - half, NOW, half) == pytest.approx(0.5)
    assert recency_score(NOW - 2 * half, NOW, half) == pytest.approx(0.25)
    assert recency_score(NOW + timedelta(days=3), NOW, half) == 1.0  # future counts as now


def test_recency_validation() -> None:
    with pytest.raises(ValueError):
        recency_score(NOW, NOW, timedelta(0))
    with pytest.raises(TypeError):
        recency_score(datetime(2024, 1, 1), NOW)  # naive vs aware


@given(ages, ages)
def test_recency_is_monotone_and_bounded(a: float, b: float) -> None:
    older, newer = max(a, b), min(a, b)
    r_old = recency_score(NOW - timedelta(days=older), NOW)
    r_new = recency_score(NOW - timedelta(days=newer), NOW)
    assert 0.0 <= r_old <= r_new <= 1.0


def test_heat_after_access_closes_gap() -> None:
    assert heat_after_access(0.0, 0.2) == pytest.approx(0.2)
    assert heat_after_access(0.5, 0.2) == pytest.approx(0.6)
    assert heat_after_access(1.0, 0.2) == 1.0
    assert heat_after_access(7.0, 0.2) == 1.0  # clamped input
    assert heat_after_access(-1.0, 0.0) == 0.0
    with pytest.raises(ValueError):
        heat_after_access(0.5, 1.5)
    with pytest.raises(ValueError):
        heat_after_access(math.nan, 0.2)


@given(unit, unit)
def test_heat_rises_and_stays_bounded(heat: float, boost: float) -> None:
    after = heat_after_access(heat, boost)
    assert heat <= after <= 1.0
    # repeated access converges towards 1 without overshooting
    value = heat
    for _ in range(50):
        value = heat_after_access(value, boost)
    assert value <= 1.0
    assert value >= after


def test_effective_heat_decays_exponentially() -> None:
    rate = math.log(2) / 7  # one-week half-life
    assert effective_heat(0.8, NOW, NOW, rate, 0.0) == 0.8
    assert effective_heat(0.8, NOW - timedelta(days=7), NOW, rate, 0.0) == pytest.approx(0.4)
    assert effective_heat(0.8, NOW - timedelta(days=14), NOW, rate, 0.0) == pytest.approx(0.2)
    assert effective_heat(0.8, NOW + timedelta(days=1), NOW, rate, 0.0) == 0.8
    assert effective_heat(0.8, NOW - timedelta(days=365), NOW, 0.0, 0.0) == 0.8  # no decay


def test_effective_heat_floor() -> None:
    long_ago = NOW - timedelta(days=1_000)
    assert effective_heat(0.8, long_ago, NOW, 0.1, 0.1) == 0.1
    assert effective_heat(0.05, long_ago, NOW, 0.1, 0.1) == 0.05  # never raised
    with pytest.raises(ValueError):
        effective_heat(0.5, NOW, NOW, -0.1, 0.1)
    with pytest.raises(ValueError):
        effective_heat(0.5, NOW, NOW, 0.1, 1.5)


@given(unit, ages, ages, st.floats(0.0, 2.0), unit)
def test_effective_heat_properties(
    heat: float, a: float, b: float, rate: float, floor: float
) -> None:
    early, late = NOW - timedelta(days=max(a, b)), NOW - timedelta(days=min(a, b))
    older = effective_heat(heat, early, NOW, rate, floor)
    newer = effective_heat(heat, late, NOW, rate, floor)
    assert 0.0 <= older <= newer <= heat
    assert older >= min(heat, floor)


def test_touch_cools_then_boosts() -> None:
    rate = math.log(2) / 7
    stored = touch(0.8, NOW - timedelta(days=7), NOW, decay_rate=rate, floor=0.0, boost=0.5)
    assert stored == pytest.approx(0.4 + 0.5 * 0.6)
