"""/v1/spaces/{space}/context: the stage-aware, token-budgeted context for the next call."""

from __future__ import annotations

import threading

from fastapi import APIRouter, Depends, Request

from app.schemas.context import ContextBody, ContextOut
from app.wiring import get_engine
from pipelines.assemble.service import Assembler, ContextRequest, TemplateSlot
from pipelines.engine import Engine

router = APIRouter(prefix="/v1/spaces", tags=["context"])
_lock = threading.Lock()


def get_assembler(request: Request, engine: Engine = Depends(get_engine)) -> Assembler:
    """One assembler per app and engine (it keeps recall's per-space profile cache)."""
    with _lock:
        assembler = getattr(request.app.state, "assembler", None)
        if assembler is None or assembler.engine is not engine:
            assembler = Assembler(engine)
            request.app.state.assembler = assembler
    return assembler


@router.post("/{space}/context", response_model=ContextOut)
def assemble_context(
    space: str, body: ContextBody, assembler: Assembler = Depends(get_assembler)
) -> ContextOut:
    """Assemble the context for ``query`` within ``context_window`` tokens: the current
    stage's memories, related memories of other stages (Personalized PageRank over the entity
    graph) and summaries of the rest, as delimited data blocks, plus a report of what was
    selected, condensed and cut."""
    result = assembler.assemble(
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
