"""What the read path may ask of upkeep: its one door to :mod:`pipelines.consolidate`.

A read can find a derived structure missing or stale: the projected entity graph Personalized
PageRank walks (context assembly, Phase 2), or the schema summary of a stage (Phase 3).
Projecting the entity graph writes only the GDS catalog, never the database, so it runs on the
read path in a READ transaction. A schema is a node: the read path never builds one; it uses
what is stored and asks the engine's :class:`~pipelines.consolidate.refresher.SchemaRefresher`
(non-blocking, bounded) for the missing and stale ones, as the ``schemas`` job also builds them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from pipelines.consolidate import schemas, upkeep
from pipelines.consolidate.records import StageSchema
from pipelines.consolidate.refresher import SchemaRefresher
from pipelines.engine import Engine

__all__ = [
    "ensure_entity_projection",
    "ensure_stage_schemas",
    "forget_entity_projection",
    "schema_refresher",
    "stored_stage_schema",
    "stored_stage_schemas",
]

_guard = threading.Lock()


def ensure_entity_projection(engine: Engine, space: str) -> str | None:
    """The name of an up-to-date GDS projection of the space's entity co-occurrence graph,
    projected now when missing or stale (a READ transaction: the GDS catalog only);
    ``None`` when the space has no entities."""
    return upkeep.ensure_entity_projection(engine, space)


def forget_entity_projection(engine: Engine, space: str) -> None:
    """Stop trusting the space's projection (a walk over it failed): the next
    :func:`ensure_entity_projection` checks it again and projects it when it is gone."""
    upkeep.forget_entity_projection(engine, space)


def ensure_stage_schemas(
    engine: Engine, space: str, stage_ids: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Stage id -> schema summary of ``stage_ids``, the missing or stale ones built now
    (unknown stage ids are absent). A write: for jobs and tools, never the read path."""
    return schemas.ensure_schemas(engine, space, stage_ids)


def schema_refresher(engine: Engine) -> SchemaRefresher:
    """The engine's schema refresher (made on first use; the engine closes it)."""
    with _guard:
        got = engine.workers.get("schemas")
        if not isinstance(got, SchemaRefresher):
            got = engine.workers["schemas"] = SchemaRefresher(engine)
        return got


def stored_stage_schemas(
    engine: Engine, space: str, stage_ids: Sequence[str]
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Stage id -> the stored schema summary of ``stage_ids`` (``stale``: the stage changed
    since), never building one; and the stages whose schema is missing or stale, which are
    queued for the refresher (absent from the map: not built yet, or unknown)."""
    found, to_build = schemas.stored_schemas(engine, space, stage_ids)
    if to_build:
        schema_refresher(engine).request(space, to_build)
    return found, to_build


def stored_stage_schema(
    engine: Engine, space: str, stage_id: str
) -> tuple[StageSchema | None, bool]:
    """The stored schema of one stage (None: not built yet) and whether a build was queued;
    NotFound for an unknown space or stage."""
    schema, to_build = schemas.stored_schema(engine, space, stage_id)
    if to_build:
        schema_refresher(engine).request(space, [stage_id])
    return schema, to_build
