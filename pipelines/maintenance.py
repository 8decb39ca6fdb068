"""What the read path may build on demand: its one door to the upkeep writes.

A read can find a derived structure missing or stale: the projected entity graph Personalized
PageRank walks (context assembly, Phase 2), or the schema summary of a stage (Phase 3).
Building either is idempotent upkeep that the consolidation jobs also do, and is safe to run
from a request.  The read path calls these functions and nothing else of
:mod:`pipelines.consolidate`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pipelines.consolidate import schemas, upkeep
from pipelines.engine import Engine

__all__ = ["ensure_entity_projection", "ensure_stage_schemas", "forget_entity_projection"]


def ensure_entity_projection(engine: Engine, space: str) -> str | None:
    """The name of an up-to-date GDS projection of the space's entity co-occurrence graph,
    projected now when missing or stale; ``None`` when the space has no entities."""
    return upkeep.ensure_entity_projection(engine, space)


def forget_entity_projection(engine: Engine, space: str) -> None:
    """Stop trusting the space's projection (a walk over it failed): the next
    :func:`ensure_entity_projection` checks it again and projects it when it is gone."""
    upkeep.forget_entity_projection(engine, space)


def ensure_stage_schemas(
    engine: Engine, space: str, stage_ids: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Stage id -> schema summary of ``stage_ids``, the missing or stale ones built now
    (unknown stage ids are absent)."""
    return schemas.ensure_schemas(engine, space, stage_ids)
