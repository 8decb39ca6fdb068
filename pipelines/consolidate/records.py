"""What consolidation returns: run records, full-pass reports, merges, supersessions and
timelines, as typed models (the HTTP API returns them as they are).

Times are ISO 8601 strings as Neo4j writes them (``toString``); ``None`` when not set.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Record(BaseModel):
    """A result read back from the graph: immutable once built."""

    model_config = ConfigDict(frozen=True)


class JobRun(Record):
    id: str
    space: str
    job: str
    dry_run: bool
    status: str = Field(description="running, ok, failed or interrupted")
    started_at: str | None = None
    ended_at: str | None = None
    duration_ms: float | None = None
    trigger: str | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)
    sample: list[dict[str, Any]] = Field(
        default_factory=list, description="A sample of the (planned) changes."
    )


class PassEntry(Record):
    """One job of a full pass."""

    seconds: float
    status: str
    dry_run: bool
    counts: dict[str, int]
    errors: list[str]


class FullPass(Record):
    """Every job run once in one space, in pipeline order, with its wall time."""

    space: str
    dry_run: bool
    total_seconds: float
    jobs: dict[str, PassEntry]


class Merge(Record):
    id: str
    kind: str = Field(
        default="memory",
        description="'memory': near-duplicate memories merged into the canonical memory; "
        "'entity': alias entities (a person's short form or misspelling) merged into the "
        "canonical entity (ids are entity keys, the reason gives the evidence).",
    )
    canonical: str
    duplicates: list[str]
    similarities: list[float] = Field(default_factory=list)
    lexical: list[float] = Field(default_factory=list)
    reason: str | None = None
    by: str | None = None
    status: str
    at: str | None = None
    undone_at: str | None = None


class MergeDetail(Merge):
    """A merge with what undoing it needs (not part of the API's answer)."""

    prior_statuses: list[str] = Field(default_factory=list)
    canonical_before: dict[str, Any] = Field(default_factory=dict)
    canonical_after: dict[str, Any] = Field(default_factory=dict)


class MergeUndone(Record):
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


class Supersession(Record):
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
    #: valid time: when the newer version became true
    valid_from: str | None = None
    #: recorded time: when the server recorded the supersession (= at)
    recorded_at: str | None = None


class SupersessionDetail(Supersession):
    """A supersession with what reverting it needs (not part of the API's answer)."""

    prior_status: str | None = Field(default=None)
    created_newer: bool | None = Field(default=None)


class SupersedeResult(Record):
    id: str
    older: str
    newer: str
    created_memory: str | None = None
    reason: str
    fact_ids: list[str] = Field(default_factory=list)
    valid_from: str | None = None
    recorded_at: str | None = None


class SupersessionReverted(Record):
    id: str
    reverted: bool
    older: str
    newer: str
    older_status: str
    facts_restored: int
    archived_created_memory: str | None = None
    #: the two times of the supersession that was reverted
    valid_from: str | None = None
    recorded_at: str | None = None


class TimelineEdge(Record):
    id: str | None = None
    older: str
    reason: str | None = None
    by: str | None = None
    rule: str | None = None
    attribute: str | None = None
    old_value: str | None = None
    new_value: str | None = None
    at: str | None = None
    valid_from: str | None = None
    recorded_at: str | None = None


class TimelineEntry(Record):
    id: str
    text: str | None = None
    status: str | None = None
    speaker: str | None = None
    role: str | None = None
    event_time: str | None = None
    supersedes: list[TimelineEdge] = Field(default_factory=list)


class StageSchema(Record):
    """A stage's schema summary (``GET /stages/{id}/schema``)."""

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
    #: the stage changed since this schema was built (a rebuild is queued)
    stale: bool = False
    embedding: list[float] | None = None
