"""Read-only views of a space's graph: one memory, entities, stages, facts. Space-scoped.

Each view is a typed model of what its ``read/*`` statement returns (times are ISO 8601
strings; a property a node lacks is ``None``); the HTTP API returns them as they are.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pipelines import session_documents, spaces
from pipelines.errors import NotFound
from pipelines.graph import GraphStore, Tx

#: What keeps the supersession history of a memory about to be deleted, in the deleting
#: transaction (``pipelines.consolidate.history.keep_history``); returns counts to report.
HistoryKeeper = Callable[[Tx, str, str], dict[str, int]]


class View(BaseModel):
    model_config = ConfigDict(frozen=True)


class Memory(View):
    id: str
    text: str | None = None
    role: str | None = None
    speaker: str | None = None
    kind: str | None = None
    tags: list[str] | None = None
    session_id: str | None = None
    turn_index: int | None = None
    stage_id: str | None = None
    status: str | None = None
    heat: float | None = None
    access_count: int | None = None
    importance: float | None = None
    content_hash: str | None = None
    gate: dict[str, Any] | None = Field(None, description="The write gate's signals.")
    metadata: dict[str, Any] | None = None
    event_time: str | None = None
    ingested_at: str | None = None
    last_access: str | None = None


class MentionedEntity(View):
    key: str
    name: str | None = None
    kind: str | None = None
    count: int | None = None


class MemoryFact(View):
    id: str
    category: str | None = None
    text: str | None = None
    speaker: str | None = None
    confidence: float | None = None
    rule: str | None = None
    status: str | None = None


class StageRef(View):
    id: str
    name: str | None = None
    kind: str | None = None


class SessionRef(View):
    id: str
    started_at: str | None = None


class Neighbour(View):
    id: str
    speaker: str | None = None
    text: str | None = None


class MemoryDetail(View):
    memory: Memory
    entities: list[MentionedEntity]
    facts: list[MemoryFact]
    stage: StageRef | None
    session: SessionRef | None
    previous: Neighbour | None
    next: Neighbour | None
    supersedes: list[str]
    superseded_by: list[str]


class Entity(View):
    key: str
    name: str | None = None
    kind: str | None = None
    aliases: list[str] = Field(
        default_factory=list,
        description="Short forms and misspellings merged into this entity by the entity_merge "
        "job (undo through /merges).",
    )
    mention_count: int | None = None
    first_seen: str | None = None
    last_seen: str | None = None


class Mention(View):
    id: str
    speaker: str | None = None
    text: str | None = None
    session_id: str | None = None
    stage_id: str | None = None
    status: str | None = None
    event_time: str | None = None
    count: int | None = None


class Cooccurring(View):
    key: str
    name: str | None = None
    kind: str | None = None
    weight: float | None = None


class EntityDetail(View):
    entity: Entity
    mentions: list[Mention]
    cooccurring: list[Cooccurring]


class SchemaBrief(View):
    summary: str | None = None
    entities: list[str] | None = None
    decisions: list[str] | None = None
    outcomes: list[str] | None = None
    open_questions: list[str] | None = None
    refreshed_at: str | None = None


class Stage(View):
    id: str
    name: str | None = None
    kind: str | None = None
    ordinal: int | None = None
    started_at: str | None = None
    ended_at: str | None = None
    schema_: SchemaBrief | None = Field(None, alias="schema")
    redirected_from: str | None = Field(
        None, description="The emptied stage id that was asked for (the read followed it)."
    )
    merged_into: list[str] | None = Field(
        None, description="The live stages that received the emptied stage's units."
    )

    model_config = ConfigDict(frozen=True, populate_by_name=True, serialize_by_alias=True)


class StageSummary(Stage):
    memories: int = 0


class StageMemory(View):
    id: str
    speaker: str | None = None
    role: str | None = None
    text: str | None = None
    session_id: str | None = None
    status: str | None = None
    event_time: str | None = None


class StageDetail(View):
    stage: Stage
    memory_count: int
    memories: list[StageMemory]
    sessions: list[str]
    previous: str | None
    next: str | None


class Fact(View):
    id: str
    category: str | None = None
    text: str | None = None
    speaker: str | None = None
    role: str | None = None
    confidence: float | None = None
    rule: str | None = None
    source_id: str | None = None
    status: str | None = None
    event_time: str | None = None


class Deleted(View):
    """What deleting one memory removed."""

    memories: int
    facts: int
    orphaned_entities: int
    supersessions_relinked: int = 0
    supersessions_undone: int = 0
    chunks: int = 0
    """Chunks of the memory (a memory longer than the embedder's window)."""


def memory(store: GraphStore, space: str, memory_id: str) -> MemoryDetail:
    spaces.require(store, space)
    rows = store.read("read/memory_detail", space=space, id=memory_id)
    if not rows:
        raise NotFound(f"memory {memory_id!r} not found in space {space!r}", field="id")
    out = dict(rows[0])
    mem = dict(out["memory"])
    for key in ("gate", "metadata"):
        mem[key] = json.loads(mem[key]) if mem.get(key) else None
    out["memory"] = mem
    return MemoryDetail.model_validate(out)


def delete_memory(
    store: GraphStore, space: str, memory_id: str, keep_history: HistoryKeeper
) -> Deleted:
    """Delete one memory with its facts, after ``keep_history`` re-linked or undid the
    supersessions it made (same transaction)."""
    spaces.require(store, space)

    def work(tx: Tx) -> list[dict[str, Any]]:
        spaces.lock_for_write(tx, space)  # history read and rewritten by one writer at a time
        kept = keep_history(tx, space, memory_id)
        rows = tx.run("ingest/delete_memory", space=space, id=memory_id)
        if rows:  # the deleted text leaves its session's document in the same transaction
            session_documents.refresh(tx, space, [rows[0]["session_id"]])
            rows = [{**rows[0], **kept}]
        return rows

    rows = store.write_tx(work)
    if not rows:
        raise NotFound(f"memory {memory_id!r} not found in space {space!r}", field="id")
    return Deleted.model_validate(rows[0])


def entities(store: GraphStore, space: str, q: str | None, skip: int, limit: int) -> list[Entity]:
    spaces.require(store, space)
    needle = q.strip().casefold() if q and q.strip() else None
    rows = store.read("read/entities_search", space=space, q=needle, skip=skip, limit=limit)
    return [Entity.model_validate(r["entity"]) for r in rows]


def entity(store: GraphStore, space: str, key: str, limit: int) -> EntityDetail:
    spaces.require(store, space)
    rows = store.read("read/entity_detail", space=space, key=key, limit=limit)
    if not rows:
        raise NotFound(f"entity {key!r} not found in space {space!r}", field="key")
    return EntityDetail.model_validate(rows[0])


def stages(store: GraphStore, space: str, skip: int, limit: int) -> list[StageSummary]:
    spaces.require(store, space)
    rows = store.read("read/stages_list", space=space, skip=skip, limit=limit)
    return [StageSummary.model_validate(r["stage"]) for r in rows]


def stage(store: GraphStore, space: str, stage_id: str, limit: int) -> StageDetail:
    spaces.require(store, space)
    rows = store.read("read/stage_detail", space=space, id=stage_id, limit=limit)
    if rows:
        return StageDetail.model_validate(rows[0])
    # a stage the communities job emptied: the live stages that absorbed its id
    moved = [str(r["id"]) for r in store.read("read/stage_successors", space=space, id=stage_id)]
    rows = store.read("read/stage_detail", space=space, id=moved[0], limit=limit) if moved else []
    if not rows:
        raise NotFound(f"stage {stage_id!r} not found in space {space!r}", field="id")
    stage = rows[0]["stage"]
    redirected = {**rows[0], "stage": {**stage, "redirected_from": stage_id, "merged_into": moved}}
    return StageDetail.model_validate(redirected)


def facts(
    store: GraphStore,
    space: str,
    category: str | None,
    speaker: str | None,
    include_superseded: bool,
    skip: int,
    limit: int,
) -> list[Fact]:
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
    return [Fact.model_validate(r["fact"]) for r in rows]
