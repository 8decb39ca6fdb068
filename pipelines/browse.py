"""Read-only views of a space's graph: one memory, entities, stages, facts. Space-scoped."""

from __future__ import annotations

import json
from typing import Any

from pipelines import session_documents, spaces
from pipelines.errors import NotFound
from pipelines.graph import GraphStore, Tx


def memory(store: GraphStore, space: str, memory_id: str) -> dict[str, Any]:
    spaces.require(store, space)
    rows = store.read("read/memory_detail", space=space, id=memory_id)
    if not rows:
        raise NotFound(f"memory {memory_id!r} not found in space {space!r}", field="id")
    out = dict(rows[0])
    mem = dict(out["memory"])
    for key in ("gate", "metadata"):
        if mem.get(key):
            mem[key] = json.loads(mem[key])
    out["memory"] = mem
    return out


def delete_memory(store: GraphStore, space: str, memory_id: str) -> dict[str, int]:
    spaces.require(store, space)

    def work(tx: Tx) -> list[dict[str, Any]]:
        rows = tx.run("read/delete_memory", space=space, id=memory_id)
        if rows:  # the deleted text leaves its session's document in the same transaction
            session_documents.refresh(tx, space, [rows[0]["session_id"]])
        return rows

    rows = store.write_tx(work)
    if not rows:
        raise NotFound(f"memory {memory_id!r} not found in space {space!r}", field="id")
    return {k: int(v) for k, v in rows[0].items() if k != "session_id"}


def entities(
    store: GraphStore, space: str, q: str | None, skip: int, limit: int
) -> list[dict[str, Any]]:
    spaces.require(store, space)
    needle = q.strip().casefold() if q and q.strip() else None
    rows = store.read("read/entities_search", space=space, q=needle, skip=skip, limit=limit)
    return [r["entity"] for r in rows]


def entity(store: GraphStore, space: str, key: str, limit: int) -> dict[str, Any]:
    spaces.require(store, space)
    rows = store.read("read/entity_detail", space=space, key=key, limit=limit)
    if not rows:
        raise NotFound(f"entity {key!r} not found in space {space!r}", field="key")
    return rows[0]


def stages(store: GraphStore, space: str, skip: int, limit: int) -> list[dict[str, Any]]:
    spaces.require(store, space)
    return [r["stage"] for r in store.read("read/stages_list", space=space, skip=skip, limit=limit)]


def stage(store: GraphStore, space: str, stage_id: str, limit: int) -> dict[str, Any]:
    spaces.require(store, space)
    rows = store.read("read/stage_detail", space=space, id=stage_id, limit=limit)
    if not rows:
        raise NotFound(f"stage {stage_id!r} not found in space {space!r}", field="id")
    return rows[0]


def facts(
    store: GraphStore,
    space: str,
    category: str | None,
    speaker: str | None,
    include_superseded: bool,
    skip: int,
    limit: int,
) -> list[dict[str, Any]]:
    spaces.require(store, space)
    rows = store.read(
        "read/facts_list",
        space=space,
        category=category,
        speaker=speaker,
        include_superseded=include_superseded,
        skip=skip,
        limit=limit,
    )
    return [r["fact"] for r in rows]
