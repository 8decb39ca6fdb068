"""Request/response models for /v1/spaces. The request body is the domain's
:class:`~pipelines.spaces.NewSpace`; the responses are the models the SDK reads too
(:mod:`mnemograph.schema`)."""

from __future__ import annotations

from mnemograph.schema import Space, SpaceCounts, SpaceCreated, SpaceDeleted, SpaceList
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
