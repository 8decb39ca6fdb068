"""Request/response models for sessions, memories, entities, stages and facts."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field
from pydantic.config import JsonDict

from app.schemas.common import StrictModel
from mnemograph.schema import IngestResponse, ItemDecision
from pipelines.browse import (
    Deleted,
    Entity,
    EntityDetail,
    Fact,
    MemoryDetail,
    StageDetail,
    StageSummary,
)
from pipelines.fields import ID_PATTERN, NOT_BLANK_PATTERN, Timestamp
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG
from pipelines.ingest.service import IngestOptions, MemoryIn, SessionIn
from pipelines.ingest.service import TurnIn as DomainTurn

__all__ = [
    "EntityDetail",
    "EntityList",
    "FactList",
    "IngestResponse",
    "ItemDecision",
    "MemoriesCreate",
    "MemoryCreate",
    "MemoryDeleted",
    "MemoryDetail",
    "SessionCreate",
    "StageDetail",
    "StageList",
    "TurnIn",
]

_LIMITS = DEFAULT_INGEST_CONFIG
#: The documented request limits (the write path enforces them: a 422 naming the item).
MAX_ITEMS = _LIMITS.max_turns_per_request
MAX_CHARS = _LIMITS.max_content_chars
#: the server's own rules, in the schema: non-empty, not only whitespace, bounded
_CONTENT: JsonDict = {"minLength": 1, "pattern": NOT_BLANK_PATTERN, "maxLength": MAX_CHARS}
_WORK = (
    "A request may have the model read at most MNEMOGRAPH_INGEST_MAX_EMBEDDING_INPUTS texts "
    f"({_LIMITS.max_embedding_inputs:,} by default: one per new memory that fits its window, "
    "one per chunk of a longer one; a 2 MB document is about 2,000 to 4,000 chunks)."
)

TurnRole = Literal["user", "assistant", "system", "tool"]
MemoryRole = Literal["user", "assistant", "system", "tool", "note"]
ID = Field(None, min_length=1, max_length=200, pattern=ID_PATTERN)


class GateOptions(StrictModel):
    gate: bool | None = Field(
        None,
        strict=True,
        description="Run the encoding gate (default: the space's setting, off by default).",
    )
    force: bool = Field(
        False, strict=True, description="Bypass the gate: store every item verbatim."
    )

    def options(self) -> IngestOptions:
        return IngestOptions(gate=self.gate, force=self.force)


class TurnIn(StrictModel):
    id: str | None = ID
    role: TurnRole
    speaker: str | None = Field(None, max_length=200)
    content: str = Field(
        description=f"The turn, verbatim: up to {MAX_CHARS:,} characters (pasted files and logs "
        f"included); longer than the embedding model's window, it is indexed as chunks. {_WORK}",
        json_schema_extra=_CONTENT,
    )
    time: Timestamp | None = Field(None, description="ISO 8601; naive times are UTC.")
    metadata: dict[str, Any] | None = None


class SessionCreate(GateOptions):
    session_id: str = Field(min_length=1, max_length=200, pattern=ID_PATTERN)
    started_at: Timestamp | None = None
    stage: str | None = Field(None, min_length=1, max_length=200, description="Explicit stage.")
    turns: list[TurnIn] = Field(
        min_length=1,
        description=f"The session's turns, in order (1 to {MAX_ITEMS:,}).",
        json_schema_extra={"maxItems": MAX_ITEMS},
    )

    def to_session(self) -> SessionIn:
        """The write path's request (its types are plain dataclasses)."""
        return SessionIn(
            session_id=self.session_id,
            started_at=self.started_at,
            stage=self.stage,
            turns=[DomainTurn(**t.model_dump()) for t in self.turns],
        )


class MemoryCreate(StrictModel):
    id: str | None = ID
    content: str = Field(
        description=f"The memory, verbatim: up to {MAX_CHARS:,} characters; longer than the "
        f"embedding model's window, it is indexed as chunks. {_WORK}",
        json_schema_extra=_CONTENT,
    )
    kind: str = Field("note", min_length=1, max_length=50)
    role: MemoryRole = "note"
    speaker: str | None = Field(None, max_length=200)
    tags: list[str] = Field(default_factory=list, max_length=50)
    time: Timestamp | None = None
    stage: str | None = Field(None, min_length=1, max_length=200)
    metadata: dict[str, Any] | None = None
    session_id: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        pattern=ID_PATTERN,
        description="The session the memory belongs to (a note taken during it), if any.",
    )


class MemoriesCreate(GateOptions):
    memories: list[MemoryCreate] = Field(
        min_length=1,
        description=f"The memories (1 to {MAX_ITEMS:,}).",
        json_schema_extra={"maxItems": MAX_ITEMS},
    )

    def to_memories(self) -> list[MemoryIn]:
        """The write path's request (its types are plain dataclasses)."""
        return [MemoryIn(**m.model_dump()) for m in self.memories]


class MemoryDeleted(BaseModel):
    id: str
    deleted: Deleted


class EntityList(BaseModel):
    entities: list[Entity]


class StageList(BaseModel):
    stages: list[StageSummary]


class FactList(BaseModel):
    facts: list[Fact]
