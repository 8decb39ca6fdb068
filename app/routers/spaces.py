"""/v1/spaces: create, list, read (with counts), delete (erases everything in the space)."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Depends, HTTPException, Query, Request

from app.auth import allowed_spaces
from app.schemas.spaces import (
    Space,
    SpaceCounts,
    SpaceCreate,
    SpaceCreated,
    SpaceDeleted,
    SpaceList,
)
from app.wiring import get_engine
from pipelines import spaces
from pipelines.engine import Engine

router = APIRouter(prefix="/v1/spaces", tags=["spaces"])


@router.post("", response_model=SpaceCreated, status_code=201)
def create_space(body: SpaceCreate, request: Request, engine: Engine = Depends(get_engine)):
    space_id = body.id or f"space-{uuid.uuid4().hex[:12]}"
    allowed = allowed_spaces(request)
    if allowed is not None and space_id not in allowed:
        raise HTTPException(403, f"this API key may not create space {space_id!r}")
    spaces.validate_space_id(space_id, field="id")
    space, created = spaces.create(
        engine.store, space_id, body.name, body.description, body.settings
    )
    return SpaceCreated(**space, created=created)


@router.get("", response_model=SpaceList)
def list_spaces(
    request: Request,
    skip: int = Query(0, ge=0),
    limit: int = Query(100, ge=1, le=1000),
    engine: Engine = Depends(get_engine),
):
    return SpaceList(
        spaces=[
            Space(**s)
            for s in spaces.list_spaces(engine.store, allowed_spaces(request), skip, limit)
        ]
    )


@router.get("/{space}", response_model=Space)
def get_space(space: str, engine: Engine = Depends(get_engine)):
    data = spaces.get(engine.store, space)
    return Space(**data, counts=SpaceCounts(**spaces.counts(engine.store, space)))


@router.delete("/{space}", response_model=SpaceDeleted)
def delete_space(space: str, engine: Engine = Depends(get_engine)):
    deleted = spaces.delete(engine.store, space)
    return SpaceDeleted(id=space, deleted=SpaceCounts(**deleted))
