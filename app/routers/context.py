"""POST /v1/spaces/{space}/context: stage-aware context assembly within a token budget."""

from __future__ import annotations

from fastapi import APIRouter

from app.schemas.common import SpacePath
from app.schemas.context import ContextBody, ContextOut
from app.services import ServicesDep

router = APIRouter(prefix="/v1/spaces", tags=["context"])


@router.post("/{space}/context", response_model=ContextOut)
def assemble_context(space: SpacePath, body: ContextBody, services: ServicesDep) -> ContextOut:
    """Assemble the context for ``query`` within ``context_window`` tokens: the current
    stage's memories, related memories of other stages (Personalized PageRank over the entity
    graph) and summaries of the rest, as delimited data blocks, plus a report of what was
    selected, condensed and cut."""
    result = services.assembler.assemble(space, body)
    return ContextOut(
        sections=result.sections,
        prompt=result.prompt,
        report=result.report,
        included_ids=result.included_ids,
    )
