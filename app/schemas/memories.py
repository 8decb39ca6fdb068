"""Request/response models for sessions, memories, entities, stages and facts."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.schemas.common import StrictModel

TurnRole = Literal["user", "assistant", "system", "tool"]
MemoryRole = Literal["user", "assistant", "system", "tool", "note"]
ID = Field(None, min_length=1, max_length=200, pattern=r"^[^\s/]([^/]*[^\s/])?$")


class GateOptions(StrictModel):
    gate: bool | None = Field(
        None, description="Run the encoding gate (default: the space's setting, off by default)."
    )
    force: bool = Field(False, description="Bypass the gate: store every item verbatim.")


class TurnIn(StrictModel):
    id: str | None = ID
    role: TurnRole
    speaker: str | None = Field(None, max_length=200)
    content: str = Field(description="The turn, verbatim (the limit is in the docs).")
    time: datetime | None = Field(None, description="ISO 8601; naive times are UTC.")
    metadata: dict[str, Any] | None = None


class SessionCreate(GateOptions):
    session_id: str = Field(min_length=1, max_length=200, pattern=r"^[^\s/]([^/]*[^\s/])?$")
    started_at: datetime | None = None
    stage: str | None = Field(None, min_length=1, max_length=200, description="Explicit stage.")
    turns: list[TurnIn] = Field(min_length=1)


class MemoryCreate(StrictModel):
    id: str | None = ID
    content: str
    kind: str = Field("note", min_length=1, max_length=50)
    role: MemoryRole = "note"
    speaker: str | None = Field(None, max_length=200)
    tags: list[str] = Field(default_factory=list, max_length=50)
    time: datetime | None = None
    stage: str | None = Field(None, min_length=1, max_length=200)
    metadata: dict[str, Any] | None = None


class MemoriesCreate(GateOptions):
    memories: list[MemoryCreate] = Field(min_length=1)


class ItemDecision(BaseModel):
    index: int
    id: str
    decision: Literal["stored", "merged", "rejected", "unchanged"]
    reason: str
    signals: dict[str, Any] = Field(default_factory=dict)
    merge_target: str | None = None
    entities: list[str] = Field(default_factory=list)
    facts: int = 0


class IngestResponse(BaseModel):
    session_id: str | None = None
    stage_ids: list[str]
    memory_ids: list[str]
    items: list[ItemDecision]
    counts: dict[str, int]


class MemoryDetail(BaseModel):
    memory: dict[str, Any]
    entities: list[dict[str, Any]]
    facts: list[dict[str, Any]]
    stage: dict[str, Any] | None
    session: dict[str, Any] | None
    previous: dict[str, Any] | None
    next: dict[str, Any] | None
    supersedes: list[str]
    superseded_by: list[str]


class MemoryDeleted(BaseModel):
    id: str
    deleted: dict[str, int]


class EntityList(BaseModel):
    entities: list[dict[str, Any]]


class EntityDetail(BaseModel):
    entity: dict[str, Any]
    mentions: list[dict[str, Any]]
    cooccurring: list[dict[str, Any]]


class StageList(BaseModel):
    stages: list[dict[str, Any]]


class StageDetail(BaseModel):
    stage: dict[str, Any]
    memory_count: int
    memories: list[dict[str, Any]]
    sessions: list[str]
    previous: str | None
    next: str | None


class FactList(BaseModel):
    facts: list[dict[str, Any]]
