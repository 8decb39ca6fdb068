"""The GDS memory budget: a projection is estimated first and refused (503) when it would not
fit, against a real Neo4j + GDS; within the budget it is built as before."""

from __future__ import annotations

import pytest

from pipelines.consolidate.config import DEFAULT_CONSOLIDATION_CONFIG, UpkeepConfig
from pipelines.consolidate.runner import run_job
from pipelines.consolidate.upkeep import (
    ensure_entity_projection,
    entity_graph_prefix,
    forget_entity_projection,
)
from pipelines.engine import Engine
from pipelines.errors import Unavailable
from tests.integration.test_consolidate_jobs import BIOGRAPHY, NOW, TOPICS, ingest, topic_sessions

TINY = 1e-9  # a share of the heap no graph fits in


def projections(engine: Engine, space: str) -> list[str]:
    rows = engine.store.read("consolidate/graph_list_prefix", prefix=entity_graph_prefix(space))
    return [str(r["graph"]) for r in rows]


def test_an_entity_projection_over_budget_is_refused_and_nothing_is_built(
    engine: Engine, space: str
) -> None:
    ingest(engine, space, BIOGRAPHY)
    forget_entity_projection(engine, space)
    with pytest.raises(Unavailable, match="not enough graph memory for the entity graph"):
        ensure_entity_projection(engine, space, UpkeepConfig(projection_heap_share=TINY))
    assert projections(engine, space) == []
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
