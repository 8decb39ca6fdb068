"""POST /v1/spaces/{space}/recall: hybrid recall over one memory space."""

from __future__ import annotations

from fastapi import APIRouter

from app.schemas.recall import RecallIn, RecallOut, RecallResult
from app.services import ServicesDep
from pipelines.recall.service import RecallFilters, RecallRequest

router = APIRouter(prefix="/v1/spaces", tags=["recall"])


@router.post("/{space}/recall", response_model=RecallOut, response_model_exclude_none=False)
def recall(space: str, body: RecallIn, services: ServicesDep) -> RecallOut:
    """Return the memories that answer ``query``, ranked; ``abstain`` says when the evidence
    is weak (results are returned anyway) and ``complete=false`` when ``deadline_ms`` cut
    optional stages short."""
    f = body.filters
    response = services.recaller.recall(
        space,
        RecallRequest(
            query=body.query,
            k=body.k,
            filters=RecallFilters(
                time_from=f.time_from,
                time_to=f.time_to,
                roles=f.roles,
                speakers=f.speakers,
                kinds=f.kinds,
                stages=f.stages,
                sessions=f.sessions,
                tags=f.tags,
            ),
            include_superseded=body.include_superseded,
            explain=body.explain,
            deadline_ms=body.deadline_ms,
            touch=body.touch,
            now=body.now,
            preset=body.preset,
            order=body.order,
            session_novelty=body.session_novelty,
        ),
    )
    return RecallOut(
        results=[
            RecallResult(
                id=h.id,
                content=h.content,
                score=h.score,
                session_id=h.session_id,
                stage_id=h.stage_id,
                time=h.time,
                speaker=h.speaker,
                role=h.role,
                explain=h.explain,
            )
            for h in response.results
        ],
        intent=response.intent,
        abstain=response.abstain,
        abstain_reason=response.abstain_reason,
        complete=response.complete,
        timings_ms=response.timings_ms,
        candidates=response.candidates,
    )
