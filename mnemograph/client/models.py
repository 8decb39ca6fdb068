"""Typed responses of the API, as the SDK returns them.

Spaces, ingest results, recall results and transfer counts are the server's own response
models (:mod:`mnemograph.schema`, shared: the server declares its responses with them). The
other responses take their shape from the server's domain (``pipelines``), which imports the
database driver and the ML models, so the SDK declares the fields it reads here; a contract
test (``tests/integration/test_sdk.py``) checks every model below against the server's
OpenAPI schema, so a renamed or removed field fails the suite instead of drifting. Unknown
fields the server adds are kept here (``extra="allow"``), so an older SDK reads a newer server.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mnemograph.schema import (
    ImportResult,
    IngestResponse,
    ItemDecision,
    RecallOut,
    RecallResult,
    Space,
    SpaceCounts,
    SpaceCreated,
    SpaceDeleted,
    TransferCounts,
)

__all__ = [
    "CONTRACT",
    "ApiModel",
    "ContextOut",
    "Cooccurring",
    "Deleted",
    "Entity",
    "EntityDetail",
    "Fact",
    "ImportResult",
    "IngestResponse",
    "ItemDecision",
    "JobRun",
    "Memory",
    "MemoryDeleted",
    "MemoryDetail",
    "MemoryFact",
    "Mention",
    "MentionedEntity",
    "Merge",
    "MergeUndone",
    "Neighbour",
    "RecallOut",
    "RecallResult",
    "SchemaBrief",
    "SessionRef",
    "Space",
    "SpaceCounts",
    "SpaceCreated",
    "SpaceDeleted",
    "Stage",
    "StageDetail",
    "StageMemory",
    "StageRef",
    "StageSchema",
    "StageSummary",
    "SupersedeResult",
    "Supersession",
    "SupersessionReverted",
    "Timeline",
    "TimelineEdge",
    "TimelineEntry",
    "TransferCounts",
]


class ApiModel(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class ContextOut(ApiModel):
    sections: dict[str, str]
    prompt: str
    report: dict[str, Any]
    included_ids: dict[str, list[str]]


class Deleted(ApiModel):
    memories: int
    facts: int
    orphaned_entities: int


class MemoryDeleted(ApiModel):
    id: str
    deleted: Deleted


class SupersedeResult(ApiModel):
    id: str
    older: str
    newer: str
    created_memory: str | None = None
    reason: str
    fact_ids: list[str] = Field(default_factory=list)


class JobRun(ApiModel):
    id: str
    space: str
    job: str
    dry_run: bool
    status: str
    started_at: str | None = None
    ended_at: str | None = None
    duration_ms: float | None = None
    trigger: str | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)
    sample: list[Any] = Field(default_factory=list)


class Fact(ApiModel):
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


class Entity(ApiModel):
    key: str
    name: str | None = None
    kind: str | None = None
    aliases: list[str] = Field(default_factory=list)
    """Short forms merged into this entity by the entity_merge job."""
    mention_count: int | None = None
    first_seen: str | None = None
    last_seen: str | None = None


# -- one memory's detail -------------------------------------------------------------------
class Memory(ApiModel):
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
    metadata: dict[str, Any] | None = None
    event_time: str | None = None
    ingested_at: str | None = None


class MentionedEntity(ApiModel):
    key: str
    name: str | None = None
    kind: str | None = None
    count: int | None = None


class MemoryFact(ApiModel):
    id: str
    category: str | None = None
    text: str | None = None
    speaker: str | None = None
    confidence: float | None = None
    rule: str | None = None
    status: str | None = None


class StageRef(ApiModel):
    id: str
    name: str | None = None
    kind: str | None = None


class SessionRef(ApiModel):
    id: str
    started_at: str | None = None


class Neighbour(ApiModel):
    id: str
    speaker: str | None = None
    text: str | None = None


class MemoryDetail(ApiModel):
    """A memory with its entities, facts, stage, session, turn neighbours and supersessions."""

    memory: Memory
    entities: list[MentionedEntity]
    facts: list[MemoryFact]
    stage: StageRef | None
    session: SessionRef | None
    previous: Neighbour | None
    next: Neighbour | None
    supersedes: list[str]
    superseded_by: list[str]


# -- entities and stages -------------------------------------------------------------------
class Mention(ApiModel):
    id: str
    speaker: str | None = None
    text: str | None = None
    session_id: str | None = None
    stage_id: str | None = None
    status: str | None = None
    event_time: str | None = None
    count: int | None = None


class Cooccurring(ApiModel):
    key: str
    name: str | None = None
    kind: str | None = None
    weight: float | None = None


class EntityDetail(ApiModel):
    entity: Entity
    mentions: list[Mention]
    cooccurring: list[Cooccurring]


class SchemaBrief(ApiModel):
    summary: str | None = None
    entities: list[str] | None = None
    decisions: list[str] | None = None
    outcomes: list[str] | None = None
    open_questions: list[str] | None = None
    refreshed_at: str | None = None


class Stage(ApiModel):
    id: str
    name: str | None = None
    kind: str | None = None
    ordinal: int | None = None
    started_at: str | None = None
    ended_at: str | None = None
    # "schema" would shadow BaseModel.schema(): read under another name
    stage_schema: SchemaBrief | None = Field(None, alias="schema")
    redirected_from: str | None = None
    merged_into: list[str] | None = None


class StageSummary(Stage):
    memories: int = 0


class StageMemory(ApiModel):
    id: str
    speaker: str | None = None
    role: str | None = None
    text: str | None = None
    session_id: str | None = None
    status: str | None = None
    event_time: str | None = None


class StageDetail(ApiModel):
    stage: Stage
    memory_count: int
    memories: list[StageMemory]
    sessions: list[str]
    previous: str | None
    next: str | None


class StageSchema(ApiModel):
    stage_id: str
    id: str | None = None
    summary: str
    entities: list[Any] = Field(default_factory=list)
    decisions: list[Any] = Field(default_factory=list)
    outcomes: list[Any] = Field(default_factory=list)
    open_questions: list[Any] = Field(default_factory=list)
    highlights: list[Any] = Field(default_factory=list)
    speakers: list[Any] = Field(default_factory=list)
    memory_count: int = 0
    session_count: int = 0
    refreshed_at: str | None = None
    rebuilt: bool = False
    embedding: list[float] | None = None


# -- consolidation: merges, supersessions, timelines --------------------------------------
class Merge(ApiModel):
    id: str
    kind: str = "memory"
    """``memory`` (near-duplicate memories) or ``entity`` (an alias entity merged into its
    canonical entity; ids are entity keys)."""
    canonical: str
    duplicates: list[str]
    similarities: list[float] = Field(default_factory=list)
    reason: str | None = None
    by: str | None = None
    status: str
    at: str | None = None
    undone_at: str | None = None


class MergeUndone(ApiModel):
    id: str
    status: str
    canonical: str
    duplicates: list[str]
    restored: int
    kept_changed_properties: list[Any] = Field(default_factory=list)


class Supersession(ApiModel):
    id: str
    older: str
    newer: str
    kind: str | None = None
    reason: str | None = None
    by: str | None = None
    rule: str | None = None
    attribute: str | None = None
    old_value: str | None = None
    new_value: str | None = None
    fact_ids: list[str] = Field(default_factory=list)
    at: str | None = None


class SupersessionReverted(ApiModel):
    id: str
    reverted: bool
    older: str
    newer: str
    older_status: str
    facts_restored: int
    archived_created_memory: str | None = None


class TimelineEdge(ApiModel):
    id: str | None = None
    older: str
    reason: str | None = None
    by: str | None = None
    rule: str | None = None
    at: str | None = None


class TimelineEntry(ApiModel):
    id: str
    text: str | None = None
    status: str | None = None
    speaker: str | None = None
    role: str | None = None
    event_time: str | None = None
    supersedes: list[TimelineEdge] = Field(default_factory=list)


class Timeline(ApiModel):
    memory_id: str
    chain: list[TimelineEntry]


#: Each model the SDK reads and the OpenAPI component it mirrors (checked by the contract test;
#: the shared ones are the server's own, so for them it checks the component's name).
CONTRACT: dict[type[BaseModel], str] = {
    SpaceCounts: "SpaceCounts",
    Space: "Space",
    SpaceCreated: "SpaceCreated",
    SpaceDeleted: "SpaceDeleted",
    ItemDecision: "ItemDecision",
    IngestResponse: "IngestResponse",
    RecallResult: "RecallResult",
    RecallOut: "RecallOut",
    ContextOut: "ContextOut",
    Deleted: "Deleted",
    MemoryDeleted: "MemoryDeleted",
    SupersedeResult: "SupersedeResult",
    JobRun: "JobRun",
    Fact: "Fact",
    Entity: "Entity",
    Memory: "Memory",
    MentionedEntity: "MentionedEntity",
    MemoryFact: "MemoryFact",
    StageRef: "StageRef",
    SessionRef: "SessionRef",
    Neighbour: "Neighbour",
    MemoryDetail: "MemoryDetail",
    Mention: "Mention",
    Cooccurring: "Cooccurring",
    EntityDetail: "EntityDetail",
    SchemaBrief: "SchemaBrief",
    Stage: "Stage",
    StageSummary: "StageSummary",
    StageMemory: "StageMemory",
    StageDetail: "StageDetail",
    StageSchema: "StageSchema",
    Merge: "Merge",
    MergeUndone: "MergeUndone",
    Supersession: "Supersession",
    SupersessionReverted: "SupersessionReverted",
    TimelineEdge: "TimelineEdge",
    TimelineEntry: "TimelineEntry",
    Timeline: "Timeline",
    ImportResult: "ImportResult",
    TransferCounts: "TransferCounts",
}
