"""POST /v1/spaces/{space}/recall."""

from __future__ import annotations

from fastapi import APIRouter

from app.schemas.common import SpacePath
from app.schemas.recall import RecallIn, RecallOut
from app.services import ServicesDep

router = APIRouter(prefix="/v1/spaces", tags=["recall"])


@router.post("/{space}/recall", response_model=RecallOut, response_model_exclude_none=False)
def recall(space: SpacePath, body: RecallIn, services: ServicesDep) -> RecallOut:
    """Return the memories that answer ``query``, ranked; ``abstain`` says when the evidence
    is weak (results are returned anyway) and ``complete=false`` when ``deadline_ms`` cut
    optional steps short."""
    return RecallOut.model_validate(services.recaller.recall(space, body), from_attributes=True)
