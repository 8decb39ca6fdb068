"""The write path: sessions and free memories; one memory's detail and deletion."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Path

from app.schemas.memories import (
    IngestResponse,
    ItemDecision,
    MemoriesCreate,
    MemoryDeleted,
    MemoryDetail,
    SessionCreate,
)
from app.wiring import get_engine, get_ingestor
from pipelines import browse
from pipelines.engine import Engine
from pipelines.ingest.service import (
    IngestOptions,
    Ingestor,
    IngestResult,
    MemoryIn,
    SessionIn,
    TurnIn,
)

router = APIRouter(prefix="/v1/spaces/{space}", tags=["memories"])


def _response(result: IngestResult) -> IngestResponse:
    return IngestResponse(
        session_id=result.session_id,
        stage_ids=result.stage_ids,
        memory_ids=result.memory_ids,
        items=[ItemDecision(**vars(i)) for i in result.items],
        counts=result.counts,
    )


@router.post("/sessions", response_model=IngestResponse, status_code=201)
def ingest_session(space: str, body: SessionCreate, ingestor: Ingestor = Depends(get_ingestor)):
    """Store one conversation session with its turns, in one transaction. Re-sending the same
    ids is idempotent (`unchanged`); every turn gets a decision with its reason."""
    session = SessionIn(
        session_id=body.session_id,
        started_at=body.started_at,
        stage=body.stage,
        turns=[TurnIn(**t.model_dump()) for t in body.turns],
    )
    result = ingestor.ingest_session(space, session, IngestOptions(body.gate, body.force))
    return _response(result)


@router.post("/memories", response_model=IngestResponse, status_code=201)
def add_memories(space: str, body: MemoriesCreate, ingestor: Ingestor = Depends(get_ingestor)):
    """Store one or many free memories (notes, facts, documents) in one transaction."""
    memories = [MemoryIn(**m.model_dump()) for m in body.memories]
    return _response(ingestor.add_memories(space, memories, IngestOptions(body.gate, body.force)))


@router.get("/memories/{memory_id}", response_model=MemoryDetail)
def get_memory(space: str, memory_id: str = Path(), engine: Engine = Depends(get_engine)):
    """A memory with its entities, facts, stage, session, neighbours and supersession chain."""
    return MemoryDetail(**browse.memory(engine.store, space, memory_id))


@router.delete("/memories/{memory_id}", response_model=MemoryDeleted)
def delete_memory(space: str, memory_id: str = Path(), engine: Engine = Depends(get_engine)):
    """Delete a memory, its facts and the entity counts and co-occurrences it contributed."""
    return MemoryDeleted(id=memory_id, deleted=browse.delete_memory(engine.store, space, memory_id))
