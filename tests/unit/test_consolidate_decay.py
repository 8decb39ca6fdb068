"""Consolidation stages and the decay job's per-memory plan (pure)."""

from datetime import UTC, datetime, timedelta

import pytest

from pipelines.consolidate.config import DecayConfig
from pipelines.consolidate.decay import consolidation_stage, plan_decay
from pipelines.recall.heat import effective_heat

CFG = DecayConfig()
NOW = datetime(2024, 6, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("age", "importance", "replays", "congruent", "previous", "expected"),
    [
        (0.5, 0.5, 0, False, None, "labile"),
        (0.5, 0.65, 0, False, None, "early"),  # importance advances
        (2.0, 0.5, 0, False, None, "early"),
        (10.0, 0.5, 0, False, None, "early"),  # late needs a replay or importance
        (10.0, 0.5, 1, False, None, "late"),
        (10.0, 0.75, 0, False, None, "late"),
        (30.0, 0.5, 2, False, None, "late"),  # consolidated needs 3 replays ...
        (30.0, 0.5, 3, False, None, "consolidated"),
        (30.0, 0.5, 1, True, None, "consolidated"),  # ... or 1 when schema-congruent
        (0.1, 0.1, 0, False, "late", "late"),  # never regresses
    ],
)
def test_stages(age, importance, replays, congruent, previous, expected):
    assert consolidation_stage(age, importance, replays, congruent, previous, CFG) == expected


def row(**kw):
    base = {
        "id": "m1",
        "heat": 1.0,
        "last_access": None,
        "ingested_at": NOW - timedelta(days=2),
        "event_time": NOW - timedelta(days=2),
        "access_count": 0,
        "restatements": 0,
        "importance": 0.5,
        "stage": None,
        "decay_rate": None,
        "heat_floor": None,
        "heat_current": None,
        "congruent": False,
    }
    base.update(kw)
    return base


def test_plan_uses_stage_rate_and_floor():
    u = plan_decay(row(access_count=5), NOW, CFG)
    assert u.stage == "consolidated"
    assert u.decay_rate == pytest.approx(CFG.base_rate_per_day * 0.5)
    assert u.heat_floor == 0.10
    expected = effective_heat(1.0, NOW - timedelta(days=2), NOW, u.decay_rate, 0.10)
    assert u.heat_current == pytest.approx(expected)
    # labile memories cool twice as fast as the base rate
    fresh = plan_decay(row(ingested_at=NOW - timedelta(minutes=10)), NOW, CFG)
    assert fresh.stage == "labile" and fresh.decay_rate == pytest.approx(CFG.base_rate_per_day * 2)


def test_floor_keeps_consolidated_heat():
    old = row(access_count=5, ingested_at=NOW - timedelta(days=400))
    u = plan_decay(old, NOW, CFG)
    assert u.heat_current == pytest.approx(0.10)


def test_unchanged_memory_is_not_rewritten():
    u = plan_decay(row(), NOW, CFG)
    again = row(
        stage=u.stage, decay_rate=u.decay_rate, heat_floor=u.heat_floor, heat_current=u.heat_current
    )
    assert plan_decay(again, NOW, CFG) is None
    # a day later the snapshot moved enough to be refreshed
    assert plan_decay(again, NOW + timedelta(days=1), CFG) is not None


def test_accesses_count_from_last_access():
    accessed = row(access_count=1, last_access=NOW - timedelta(hours=1), heat=0.8)
    u = plan_decay(accessed, NOW, CFG)
    assert u.heat_current == pytest.approx(
        effective_heat(0.8, NOW - timedelta(hours=1), NOW, u.decay_rate, u.heat_floor)
    )
