"""POST /v1/spaces/{space}/recall: hybrid recall over one memory space."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from app.schemas.recall import RecallIn, RecallOut
from pipelines.recall.service import Recaller

router = APIRouter(prefix="/v1/spaces", tags=["recall"])


def get_recaller(request: Request) -> Recaller:
    """The app's Recaller, built once in the lifespan (it caches each space's size and
    speakers briefly, and owns no threads: the app hands it its executor)."""
    recaller: Recaller = request.app.state.recaller
    return recaller


@router.post("/{space}/recall", response_model=RecallOut, response_model_exclude_none=False)
def recall(space: str, body: RecallIn, recaller: Recaller = Depends(get_recaller)) -> RecallOut:
    """Return the memories that answer ``query``, ranked; ``abstain`` says when the evidence
    is weak (results are returned anyway) and ``complete=false`` when ``deadline_ms`` cut
    optional steps short."""
    return RecallOut.model_validate(recaller.recall(space, body), from_attributes=True)
