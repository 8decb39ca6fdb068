"""Request/response models for /v1/spaces."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.schemas.common import StrictModel


class SpaceCreate(StrictModel):
    id: str | None = Field(
        None, description="Client-chosen id (1-64 chars: letters, digits, _ . -). Default: random."
    )
    name: str | None = Field(None, max_length=200)
    description: str | None = Field(None, max_length=2000)
    settings: dict[str, Any] = Field(
        default_factory=dict, description="Per-space settings, e.g. {'gate': {'enabled': true}}."
    )


class SpaceCounts(BaseModel):
    memories: int
    sessions: int
    entities: int
    stages: int
    facts: int
    schemas: int
    job_runs: int


class Space(BaseModel):
    id: str
    name: str | None = None
    description: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    created_at: str | None = None
    counts: SpaceCounts | None = None


class SpaceCreated(Space):
    created: bool


class SpaceList(BaseModel):
    spaces: list[Space]


class SpaceDeleted(BaseModel):
    id: str
    deleted: SpaceCounts
