"""Request/response models for /v1/spaces. The request body is the domain's
:class:`~pipelines.spaces.NewSpace`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from pipelines.spaces import NewSpace, SpacePatch

__all__ = [
    "NewSpace",
    "Space",
    "SpaceCounts",
    "SpaceCreated",
    "SpaceDeleted",
    "SpaceList",
    "SpacePatch",
]


class SpaceCounts(BaseModel):
    memories: int
    sessions: int
    entities: int
    stages: int
    facts: int
    schemas: int
    job_runs: int
    chunks: int = Field(0, description="Chunks of the memories longer than the embedder's window.")


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
