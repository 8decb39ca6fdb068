"""Request/response models for consolidation: jobs, merges, supersessions, stage schemas.

The records are the domain's (:mod:`pipelines.consolidate.records`), returned as they are;
the correction body is the domain's :class:`~pipelines.consolidate.supersessions.SupersedeRequest`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from app.schemas.common import StrictModel
from pipelines.consolidate.records import (
    JobRun,
    Merge,
    MergeUndone,
    StageSchema,
    SupersedeResult,
    Supersession,
    SupersessionReverted,
    TimelineEntry,
)
from pipelines.consolidate.supersessions import SupersedeRequest

__all__ = [
    "JobName",
    "JobRequest",
    "JobRun",
    "JobRunList",
    "Merge",
    "MergeList",
    "MergeUndone",
    "StageSchema",
    "SupersedeRequest",
    "SupersedeResult",
    "Supersession",
    "SupersessionList",
    "SupersessionReverted",
    "Timeline",
    "TimelineEntry",
]

JobName = Literal[
    "decay",
    "merge",
    "supersede",
    "entity_merge",
    "communities",
    "schemas",
    "upkeep",
    "token_vectors",
    "fact_vectors",
    "retention",
]


class JobRequest(StrictModel):
    dry_run: bool | None = Field(
        None,
        strict=True,
        description="Report what would change without changing anything. Default: false, "
        "except for retention (a dry run unless false is sent).",
    )


class JobRunList(BaseModel):
    runs: list[JobRun]


class MergeList(BaseModel):
    merges: list[Merge]


class SupersessionList(BaseModel):
    supersessions: list[Supersession]


class Timeline(BaseModel):
    memory_id: str
    chain: list[TimelineEntry]
