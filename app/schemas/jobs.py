"""Request/response models for consolidation: jobs, merges, supersessions, stage schemas."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from app.schemas.common import StrictModel

JobName = Literal[
    "decay", "merge", "supersede", "communities", "schemas", "upkeep", "token_vectors", "retention"
]


class JobRequest(StrictModel):
    dry_run: bool | None = Field(
        None,
        description="Report what would change without changing anything. Default: false, "
        "except for retention (a dry run unless false is sent).",
    )


class JobRun(BaseModel):
    id: str
    space: str
    job: str
    dry_run: bool
    status: str = Field(description="running, ok, failed or interrupted")
    started_at: str | None = None
    ended_at: str | None = None
    duration_ms: float | None = None
    trigger: str | None = None
    counts: dict[str, Any] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)
    sample: list[dict[str, Any]] = Field(
        default_factory=list, description="A sample of the (planned) changes."
    )


class JobRunList(BaseModel):
    runs: list[JobRun]


class Merge(BaseModel):
    id: str
    canonical: str
    duplicates: list[str]
    similarities: list[float] = Field(default_factory=list)
    lexical: list[float] = Field(default_factory=list)
    reason: str | None = None
    by: str | None = None
    status: str
    at: str | None = None
    undone_at: str | None = None


class MergeList(BaseModel):
    merges: list[Merge]


class MergeUndone(BaseModel):
    id: str
    status: str
    canonical: str
    duplicates: list[str]
    restored: int
    kept_changed_properties: list[str] = Field(
        default_factory=list,
        description="Counters of the canonical memory that changed after the merge and were "
        "therefore kept rather than restored.",
    )


class SupersedeRequest(StrictModel):
    by_memory_id: str | None = Field(None, description="The memory that replaces this one.")
    content: str | None = Field(
        None,
        max_length=20_000,
        description="New content, stored as a new memory that replaces "
        "this one (same speaker and role unless given).",
    )
    reason: str = Field(min_length=1, max_length=2_000)
    speaker: str | None = Field(None, max_length=200)
    role: Literal["user", "assistant", "system", "tool", "note"] | None = None


class Supersession(BaseModel):
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


class SupersedeResult(BaseModel):
    id: str
    older: str
    newer: str
    created_memory: str | None = None
    reason: str
    fact_ids: list[str] = Field(default_factory=list)


class SupersessionList(BaseModel):
    supersessions: list[Supersession]


class SupersessionReverted(BaseModel):
    id: str
    reverted: bool
    older: str
    newer: str
    older_status: str
    facts_restored: int
    archived_created_memory: str | None = None


class TimelineEdge(BaseModel):
    id: str | None = None
    older: str
    reason: str | None = None
    by: str | None = None
    rule: str | None = None
    attribute: str | None = None
    old_value: str | None = None
    new_value: str | None = None
    at: str | None = None


class TimelineEntry(BaseModel):
    id: str
    text: str | None = None
    status: str | None = None
    speaker: str | None = None
    role: str | None = None
    event_time: str | None = None
    supersedes: list[TimelineEdge] = Field(default_factory=list)


class Timeline(BaseModel):
    memory_id: str
    chain: list[TimelineEntry]


class StageSchema(BaseModel):
    stage_id: str
    id: str | None = None
    summary: str
    entities: list[str] = Field(default_factory=list)
    decisions: list[str] = Field(default_factory=list)
    outcomes: list[str] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    highlights: list[str] = Field(default_factory=list)
    speakers: list[str] = Field(default_factory=list)
    memory_count: int = 0
    session_count: int = 0
    refreshed_at: str | None = None
    rebuilt: bool = False
    embedding: list[float] | None = None
