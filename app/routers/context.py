"""/v1/spaces/{space}/context: the stage-aware, token-budgeted context for the next call."""

from __future__ import annotations

from fastapi import APIRouter

from app.schemas.context import ContextBody, ContextOut
from app.services import ServicesDep
from pipelines.assemble.service import ContextRequest, TemplateSlot

router = APIRouter(prefix="/v1/spaces", tags=["context"])


@router.post("/{space}/context", response_model=ContextOut)
def assemble_context(space: str, body: ContextBody, services: ServicesDep) -> ContextOut:
    """Assemble the context for ``query`` within ``context_window`` tokens: the current
    stage's memories, related memories of other stages (Personalized PageRank over the entity
    graph) and summaries of the rest, as delimited data blocks, plus a report of what was
    selected, condensed and cut."""
    result = services.assembler.assemble(
        space,
        ContextRequest(
            query=body.query,
            context_window=body.context_window,
            headroom=body.headroom,
            split=tuple(body.split),  # type: ignore[arg-type]  # length checked by the service
            stage=body.stage,
            session=body.session,
            template=[
                TemplateSlot(s.key, s.content, s.priority, s.condenser) for s in body.template
            ]
            if body.template is not None
            else None,
            as_of=body.as_of,
            explain=body.explain,
            now=body.now,
            flat=body.flat,
            ablate=frozenset(body.ablate),
            include_superseded=body.include_superseded,
        ),
    )
    return ContextOut(
        sections=result.sections,
        prompt=result.prompt,
        report=result.report,
        included_ids=result.included_ids,
    )
