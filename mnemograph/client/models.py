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
    "Deleted",
    "Entity",
    "Fact",
    "ImportResult",
    "IngestResponse",
    "ItemDecision",
    "JobRun",
    "MemoryDeleted",
    "RecallOut",
    "RecallResult",
    "Space",
    "SpaceCounts",
    "SpaceCreated",
    "SpaceDeleted",
    "SupersedeResult",
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
    ImportResult: "ImportResult",
    TransferCounts: "TransferCounts",
}
