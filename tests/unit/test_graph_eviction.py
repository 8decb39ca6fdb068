"""Which projections eviction drops (pure): least recently used first, never one used within
the grace period, held by a live job's lease or asked to be kept, and none at all when
together they would not make room."""

from __future__ import annotations

import pytest

from pipelines.consolidate.config import UpkeepConfig
from pipelines.consolidate.graph_catalog import Projection, plan_eviction

NOW = 10_000.0


def graph(name: str, idle: float, size: int = 100, held: bool = False) -> Projection:
    return Projection(name=name, bytes=size, last_used=NOW - idle, held=held)


GRAPHS = [
    graph("a", idle=500),
    graph("b", idle=2_000),
    graph("c", idle=30),  # within the grace period
    graph("d", idle=5_000, held=True),  # a live job's run
    graph("e", idle=1_000),
]


def names(plan: list[Projection] | None) -> list[str] | None:
    return None if plan is None else [g.name for g in plan]


def test_least_recently_used_first_until_enough_is_freed() -> None:
    assert names(plan_eviction(GRAPHS, 1, 60, NOW, None)) == ["b"]
    assert names(plan_eviction(GRAPHS, 150, 60, NOW, None)) == ["b", "e"]
    assert names(plan_eviction(GRAPHS, 300, 60, NOW, None)) == ["b", "e", "a"]


def test_the_kept_used_and_held_ones_are_never_chosen() -> None:
    assert names(plan_eviction(GRAPHS, 150, 60, NOW, keep="b")) == ["e", "a"]
    assert names(plan_eviction(GRAPHS, 301, 60, NOW, None)) is None  # c and d cannot go
    assert names(plan_eviction(GRAPHS, 400, 0, NOW, None)) == ["b", "e", "a", "c"]


def test_nothing_to_free_drops_nothing() -> None:
    assert names(plan_eviction(GRAPHS, 0, 60, NOW, None)) == []
    assert names(plan_eviction([], 1, 60, NOW, None)) is None


def test_idle_limit_is_checked_against_the_grace_period() -> None:
    # an idle limit below the grace counts as the grace
    cfg = UpkeepConfig(projection_evict_grace_seconds=120, projection_max_idle_seconds=60)
    assert cfg.max_idle_seconds == 120
    assert UpkeepConfig(projection_max_idle_seconds=None).projection_max_idle_seconds is None
    with pytest.raises(ValueError):
        UpkeepConfig(projection_max_idle_seconds=float("inf"))
