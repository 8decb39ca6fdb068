"""The GDS memory budget against a real Neo4j + GDS: a projection is estimated first; one that
would not fit evicts idle projections of other spaces (least recently used first), and is
refused (503) when none can make room; idle projections are dropped by age; two processes
projecting one space at once build one graph."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from functools import partial

import pytest

from pipelines.consolidate import graph_budget, graph_catalog
from pipelines.consolidate.config import DEFAULT_CONSOLIDATION_CONFIG, UpkeepConfig
from pipelines.consolidate.runner import run_job
from pipelines.consolidate.upkeep import (
    build_entity_projection,
    ensure_entity_projection,
    entity_graph_name,
    entity_graph_prefix,
    forget_entity_projection,
)
from pipelines.engine import Engine
from pipelines.errors import Unavailable
from tests.integration.test_consolidate_jobs import BIOGRAPHY, NOW, TOPICS, ingest, topic_sessions
from tests.integration.threads import race

TINY = 1e-9  # a share of the heap no graph fits in


def projections(engine: Engine, space: str) -> list[str]:
    rows = engine.store.read("consolidate/graph_list_prefix", prefix=entity_graph_prefix(space))
    return [str(r["graph"]) for r in rows]


def test_the_budget_derives_from_the_configured_heap(engine: Engine, space: str) -> None:
    """The heap is the server's setting (the test Neo4j's), the budget the least of the share
    and the heap less the headroom."""
    ingest(engine, space, BIOGRAPHY)
    heap = graph_budget.configured_heap(engine.store)
    assert heap is not None and heap >= 2**30  # the test instances run with 1g or 2g
    size = "consolidate/entity_graph_size"
    half = graph_budget.measure(engine.store, size, space, UpkeepConfig())
    assert half.budget == min(heap / 2, heap - 512 * 2**20)
    headroom = int(heap / 2**20 * 3 / 4)
    tight = UpkeepConfig(projection_heap_share=0.9, projection_heap_headroom_mib=headroom)
    assert graph_budget.measure(engine.store, size, space, tight).budget == heap - headroom * 2**20
    jvm = float(engine.store.read("metrics/gds_graphs")[0]["heap_max"])
    assert graph_budget.budget_bytes(engine.store, UpkeepConfig(), jvm) == half.budget


def test_an_entity_projection_over_budget_is_refused_and_nothing_is_built(
    engine: Engine, space: str, client
) -> None:
    ingest(engine, space, BIOGRAPHY)
    forget_entity_projection(engine, space)
    before = graph_budget.refusals()
    with pytest.raises(Unavailable, match="not enough graph memory for the entity graph"):
        ensure_entity_projection(engine, space, UpkeepConfig(projection_heap_share=TINY))
    assert projections(engine, space) == []
    assert graph_budget.refusals() == {**before, "too_large": before["too_large"] + 1}
    text = client.get("/metrics").text
    refused = before["too_large"] + 1
    line = f'mnemograph_gds_projections_refused_total{{reason="too_large"}} {refused}.0'
    assert line in text.splitlines()
    heap = graph_budget.configured_heap(engine.store)
    assert heap is not None
    (budget,) = [ln for ln in text.splitlines() if ln.startswith("mnemograph_gds_budget_bytes ")]
    assert float(budget.split()[1]) == min(heap / 2, heap - 512 * 2**20)
    name = ensure_entity_projection(engine, space, UpkeepConfig())
    assert name is not None and projections(engine, space) == [name]


def test_the_communities_job_over_budget_fails_with_the_reason(engine: Engine, space: str) -> None:
    assert TOPICS
    ingest(engine, space, topic_sessions(rounds=2))
    tight = DEFAULT_CONSOLIDATION_CONFIG.model_copy(
        update={"upkeep": UpkeepConfig(projection_heap_share=TINY)}
    )
    run = run_job(engine, space, "communities", now=NOW, config=tight)
    assert run.status == "failed"
    assert any("not enough graph memory for the community graph" in e for e in run.errors)
    assert run_job(engine, space, "communities", now=NOW).status == "ok"


# --------------------------------------------------------------------------- eviction

LATER = 3_600.0  # an hour on: every projection made before is idle by then


@pytest.fixture
def other_space(client) -> Iterator[str]:
    sid = f"t-{uuid.uuid4().hex[:10]}"
    assert client.post("/v1/spaces", json={"id": sid}).status_code == 201
    yield sid
    client.delete(f"/v1/spaces/{sid}")


def an_hour_later(monkeypatch: pytest.MonkeyPatch, engine: Engine, *idle: str) -> None:
    """Move this process's clock an hour on; every projection but those of ``idle`` is then
    used (the other tests' projections are left alone)."""
    now = graph_catalog.clock() + LATER
    monkeypatch.setattr(graph_catalog, "clock", lambda: now)
    for g in graph_catalog.projections(engine.store):
        if not any(g.name.startswith(entity_graph_prefix(s)) for s in idle):
            graph_catalog.note_use(engine.store, g.name)


def share_short_by_half_of(engine: Engine, space: str, graph: str) -> float:
    """A heap share for which projecting ``space`` needs half of ``graph``'s bytes more."""
    held = {g.name: g.bytes for g in graph_catalog.projections(engine.store)}
    whole_heap = UpkeepConfig(projection_heap_share=1.0, projection_heap_headroom_mib=0)
    room = graph_budget.measure(engine.store, "consolidate/entity_graph_size", space, whole_heap)
    return (room.held + room.estimate - held[graph] / 2) / room.budget


def test_a_projection_that_does_not_fit_evicts_an_idle_one_of_another_space(
    engine: Engine, space: str, other_space: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest(engine, space, BIOGRAPHY)
    ingest(engine, other_space, BIOGRAPHY)
    old = ensure_entity_projection(engine, other_space)
    assert old is not None
    an_hour_later(monkeypatch, engine, other_space)
    tight = UpkeepConfig(
        projection_heap_share=share_short_by_half_of(engine, space, old),
        projection_max_idle_seconds=None,
    )
    evicted = graph_catalog.evictions().get("room", 0)
    name = ensure_entity_projection(engine, space, tight)
    assert name is not None and projections(engine, space) == [name]
    assert projections(engine, other_space) == []
    assert graph_catalog.evictions()["room"] == evicted + 1
    quiet = UpkeepConfig(projection_max_idle_seconds=None)
    assert ensure_entity_projection(engine, other_space, quiet) == old  # projected again


def test_a_projection_used_within_the_grace_period_is_kept_and_the_new_one_refused(
    engine: Engine, space: str, other_space: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest(engine, space, BIOGRAPHY)
    ingest(engine, other_space, BIOGRAPHY)
    old = ensure_entity_projection(engine, other_space)
    assert old is not None
    an_hour_later(monkeypatch, engine, other_space)
    quiet = UpkeepConfig(projection_max_idle_seconds=None)
    assert ensure_entity_projection(engine, other_space, quiet) == old  # a walk, just now
    tight = UpkeepConfig(
        projection_heap_share=share_short_by_half_of(engine, space, old),
        projection_max_idle_seconds=None,
    )
    in_use = graph_budget.refusals()["in_use"]
    with pytest.raises(Unavailable, match="no projection unused for 60 s could make room"):
        ensure_entity_projection(engine, space, tight)
    assert graph_budget.refusals()["in_use"] == in_use + 1
    assert projections(engine, other_space) == [old] and projections(engine, space) == []


def test_an_idle_projection_is_dropped_by_age(
    engine: Engine, space: str, other_space: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest(engine, space, BIOGRAPHY)
    ingest(engine, other_space, BIOGRAPHY)
    old = ensure_entity_projection(engine, other_space)
    assert old is not None
    an_hour_later(monkeypatch, engine, other_space)
    dropped = graph_catalog.evictions().get("idle", 0)
    sweeping = UpkeepConfig(projection_max_idle_seconds=1_800.0, projection_sweep_seconds=0.0)
    name = ensure_entity_projection(engine, space, sweeping)
    assert name is not None and projections(engine, space) == [name]  # used: kept
    assert projections(engine, other_space) == []
    assert graph_catalog.evictions()["idle"] == dropped + 1


def test_two_processes_projecting_one_space_at_once_build_one_graph(
    engine: Engine, space: str
) -> None:
    """The per-space lock is per process: two processes may both find the graph missing and
    project it; GDS keeps one and refuses the other (at the start, or at registration when
    both were built side by side: both happen within a few races), which then uses it."""
    ingest(engine, space, BIOGRAPHY)
    base = entity_graph_name(engine, space)
    assert base is not None
    for n in range(6):
        name = f"{base}-{n}"
        results = race(*(partial(build_entity_projection, engine, space, name),) * 2)
        assert results == [None, None]
        assert projections(engine, space) == [name]
        build_entity_projection(engine, space, name)  # once more, now that it exists
        assert projections(engine, space) == [name]
        graph_catalog.drop(engine.store, name)
