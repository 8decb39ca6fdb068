"""/v1/spaces: create, list, read (with counts), change (PATCH), delete (erases everything in
the space)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Query, Request, Response

from app.auth import allowed_spaces
from app.schemas.common import Skip, SpacePath
from app.schemas.spaces import (
    NewSpace,
    Space,
    SpaceCounts,
    SpaceCreated,
    SpaceDeleted,
    SpaceList,
    SpacePatch,
)
from app.services import ServicesDep
from pipelines import space_settings, spaces

router = APIRouter(prefix="/v1/spaces", tags=["spaces"])


@router.post(
    "",
    response_model=SpaceCreated,
    status_code=201,
    responses={
        200: {
            "model": SpaceCreated,
            "description": "The space exists: it is returned unchanged, with `created=false`.",
        }
    },
)
def create_space(
    body: NewSpace, request: Request, response: Response, services: ServicesDep
) -> SpaceCreated:
    """Create a space: 201. An existing id returns that space, unchanged, with
    ``created=false``: 200.
    ``settings`` may override the sections ``gate``, ``assembly``, ``consolidation`` and
    ``retention``; an unknown section or key, or a bad value, is a 422 naming the field."""
    allowed = allowed_spaces(request)
    if allowed is not None and body.id not in allowed:
        raise HTTPException(403, f"this API key may not create space {body.id!r}")
    space_settings.validate(body.settings)
    space, created = spaces.create(services.engine.store, body)
    if not created:
        response.status_code = 200
    return SpaceCreated.model_validate({**space, "created": created})


@router.get("", response_model=SpaceList)
def list_spaces(
    request: Request,
    services: ServicesDep,
    skip: Skip = 0,
    limit: int = Query(100, ge=1, le=1000),
) -> SpaceList:
    found = spaces.list_spaces(services.engine.store, allowed_spaces(request), skip, limit)
    return SpaceList(spaces=[Space.model_validate(s) for s in found])


@router.get("/{space}", response_model=Space)
def get_space(space: SpacePath, services: ServicesDep) -> Space:
    store = services.engine.store
    data = spaces.get(store, space)
    return Space.model_validate({**data, "counts": spaces.counts(store, space)})


@router.patch("/{space}", response_model=Space)
def update_space(space: SpacePath, body: SpacePatch, services: ServicesDep) -> Space:
    """Change a space's name, description or settings. ``settings`` is a JSON merge patch over
    the stored settings (``null`` removes a key or a whole section); the result is checked like
    a new space's (a 422 naming the field, nothing changed), so settings that no longer
    validate can always be fixed or dropped."""
    store = services.engine.store
    data = spaces.update(store, space, body, space_settings.validate)
    return Space.model_validate({**data, "counts": spaces.counts(store, space)})


@router.delete("/{space}", response_model=SpaceDeleted)
def delete_space(space: SpacePath, services: ServicesDep) -> SpaceDeleted:
    deleted = spaces.delete(services.engine.store, space)
    services.engine.token_cache.drop_space(space)
    return SpaceDeleted(id=space, deleted=SpaceCounts.model_validate(deleted))
