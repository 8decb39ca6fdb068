"""Browsing a space's graph: entities, stages, facts."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query

from app.schemas.common import IdPath, KeyPath, Skip, SpacePath
from app.schemas.memories import EntityDetail, EntityList, FactList, StageDetail, StageList
from app.services import ServicesDep
from pipelines import browse

router = APIRouter(prefix="/v1/spaces/{space}", tags=["graph"])

FactCategory = Literal[
    "decision",
    "preference",
    "instruction",
    "constraint",
    "fact",
    "question",
    "action_item",
    "provisional",
]


@router.get("/entities", response_model=EntityList)
def list_entities(
    space: SpacePath,
    services: ServicesDep,
    q: str | None = Query(None, max_length=200, description="name fragment (case-insensitive)"),
    skip: Skip = 0,
    limit: int = Query(50, ge=1, le=500),
) -> EntityList:
    return EntityList(entities=browse.entities(services.engine.store, space, q, skip, limit))


@router.get("/entities/{key}", response_model=EntityDetail)
def get_entity(
    space: SpacePath, key: KeyPath, services: ServicesDep, limit: int = Query(50, ge=1, le=500)
) -> EntityDetail:
    """An entity (by canonical key) with the memories that mention it, in time order, and the
    entities it co-occurs with, strongest first."""
    return browse.entity(services.engine.store, space, key, limit)


@router.get("/stages", response_model=StageList)
def list_stages(
    space: SpacePath,
    services: ServicesDep,
    skip: Skip = 0,
    limit: int = Query(100, ge=1, le=1000),
) -> StageList:
    """Stages in time order, with memory counts and their schema summary when one exists."""
    return StageList(stages=browse.stages(services.engine.store, space, skip, limit))


@router.get("/stages/{stage_id}", response_model=StageDetail)
def get_stage(
    space: SpacePath,
    stage_id: IdPath,
    services: ServicesDep,
    limit: int = Query(100, ge=1, le=1000),
) -> StageDetail:
    return browse.stage(services.engine.store, space, stage_id, limit)


@router.get("/facts", response_model=FactList)
def list_facts(
    space: SpacePath,
    services: ServicesDep,
    category: FactCategory | None = None,
    speaker: str | None = Query(None, max_length=200),
    include_superseded: bool = False,
    skip: Skip = 0,
    limit: int = Query(100, ge=1, le=1000),
) -> FactList:
    """Facts of the space, oldest first. ``instruction`` and ``preference`` are the user's
    standing instructions and preferences (from user turns, the turn as ``source_id``); a
    changed one is ``superseded`` by its replacement (``include_superseded=true`` shows the
    history, ``/supersessions`` the edges, which can be reverted)."""
    facts = browse.facts(
        services.engine.store, space, category, speaker, include_superseded, skip, limit
    )
    return FactList(facts=facts)
