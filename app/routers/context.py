"""/v1/spaces/{space}/context: the stage-aware, token-budgeted context for the next call."""

from __future__ import annotations

import threading

from fastapi import APIRouter, Depends, Request

from app.schemas.context import ContextBody, ContextOut
from app.wiring import get_engine
from pipelines.assemble.service import Assembler
from pipelines.engine import Engine

router = APIRouter(prefix="/v1/spaces", tags=["context"])
_lock = threading.Lock()


def get_assembler(request: Request, engine: Engine = Depends(get_engine)) -> Assembler:
    """One assembler per app and engine (it keeps recall's per-space profile cache); its
    read-ahead pool is the app's (``app.state.read_ahead``, shut down with the app)."""
    with _lock:
        assembler = getattr(request.app.state, "assembler", None)
        if assembler is None or assembler.engine is not engine:
            assembler = Assembler(engine, read_ahead=request.app.state.read_ahead)
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
    result = assembler.assemble(space, body)
    return ContextOut(
        sections=result.sections,
        prompt=result.prompt,
        report=result.report,
        included_ids=result.included_ids,
    )
