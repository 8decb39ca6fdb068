"""What the write path takes and answers: sessions, turns and free memories in; one decision
per item out (:mod:`pipelines.ingest.service` does the work)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Role = Literal["user", "assistant", "system", "tool", "note"]
Decision = Literal["stored", "merged", "rejected", "unchanged"]


@dataclass
class TurnIn:
    role: Role
    content: str
    id: str | None = None
    speaker: str | None = None
    time: datetime | None = None
    metadata: dict[str, Any] | None = None


@dataclass
class SessionIn:
    session_id: str
    turns: list[TurnIn]
    started_at: datetime | None = None
    stage: str | None = None


@dataclass
class MemoryIn:
    content: str
    id: str | None = None
    kind: str = "note"
    role: Role = "note"
    speaker: str | None = None
    tags: list[str] = field(default_factory=list)
    time: datetime | None = None
    stage: str | None = None
    metadata: dict[str, Any] | None = None
    session_id: str | None = None


@dataclass
class IngestOptions:
    gate: bool | None = None  # None: the space's setting (default off)
    force: bool = False  # bypass the gate: store everything


@dataclass
class ItemResult:
    id: str
    index: int
    decision: Decision
    reason: str
    signals: dict[str, Any] = field(default_factory=dict)
    merge_target: str | None = None
    entities: list[str] = field(default_factory=list)
    facts: int = 0


@dataclass
class IngestResult:
    items: list[ItemResult]
    stage_ids: list[str]
    session_id: str | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def memory_ids(self) -> list[str]:
        return [i.id for i in self.items if i.decision in ("stored", "unchanged")]
