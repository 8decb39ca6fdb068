"""Typed responses of the API, as the SDK returns them.

The server's own models live in ``app.schemas`` and ``pipelines`` and import the server (its
database driver and models), so the SDK declares the fields it reads here and a contract test
(``tests/integration/test_sdk.py``) checks every one of them against the server's OpenAPI
schema: a renamed or removed field fails the suite instead of drifting. Unknown fields the
server adds are kept (``extra="allow"``), so an older SDK reads a newer server.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ApiModel(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class SpaceCounts(ApiModel):
    memories: int
    sessions: int
    entities: int
    stages: int
    facts: int
    schemas: int
    job_runs: int


class Space(ApiModel):
    id: str
    name: str | None = None
    description: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    created_at: str | None = None
    counts: SpaceCounts | None = None


class SpaceCreated(Space):
    created: bool


class SpaceDeleted(ApiModel):
    id: str
    deleted: SpaceCounts


class ItemDecision(ApiModel):
    index: int
    id: str
    decision: str
    reason: str
    merge_target: str | None = None
    entities: list[str] = Field(default_factory=list)
    facts: int = 0


class IngestResponse(ApiModel):
    session_id: str | None = None
    stage_ids: list[str]
    memory_ids: list[str]
    items: list[ItemDecision]
    counts: dict[str, int]


class RecallResult(ApiModel):
    id: str
    content: str
    score: float
    session_id: str | None = None
    stage_id: str | None = None
    time: datetime | None = None
    speaker: str | None = None
    role: str | None = None
    explain: dict[str, Any] | None = None


class RecallOut(ApiModel):
    results: list[RecallResult]
    intent: str
    abstain: bool
    abstain_reason: str | None = None
    complete: bool
    timings_ms: dict[str, float]
    candidates: int


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


class Fact(ApiModel):
    id: str
    category: str | None = None
    text: str | None = None
    speaker: str | None = None
    status: str | None = None
    event_time: str | None = None


class Entity(ApiModel):
    key: str
    name: str | None = None
    kind: str | None = None
    mention_count: int | None = None


class ImportResult(ApiModel):
    nodes: dict[str, int]
    relationships: dict[str, int]


class TransferCounts(ApiModel):
    nodes: dict[str, int]
    relationships: dict[str, int]


#: Each SDK model and the OpenAPI component it mirrors (checked by the contract test).
CONTRACT: dict[type[ApiModel], str] = {
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
    ImportResult: "ImportResult",
    TransferCounts: "TransferCounts",
}
