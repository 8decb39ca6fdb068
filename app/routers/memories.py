"""The write path: sessions and free memories; one memory's detail and deletion."""

from __future__ import annotations

from fastapi import APIRouter, Request

from app.limits import BODY_LIMIT_RESPONSES, LimitedBodyRoute, ingest_deadline
from app.schemas.common import IdPath, SpacePath
from app.schemas.memories import (
    IngestResponse,
    MemoriesCreate,
    MemoryDeleted,
    MemoryDetail,
    SessionCreate,
)
from app.services import ServicesDep
from pipelines import browse
from pipelines.consolidate import history

router = APIRouter(prefix="/v1/spaces/{space}", tags=["memories"], route_class=LimitedBodyRoute)

_WRITE_RESPONSES: dict[int | str, dict[str, object]] = {
    **BODY_LIMIT_RESPONSES,
    422: {
        "description": "Invalid input, naming the field: among others content longer than "
        "4,000,000 characters per memory, more than 8,000,000 characters in one request, or "
        "more texts for the embedding model than MNEMOGRAPH_INGEST_MAX_EMBEDDING_INPUTS "
        "(4,096 by default: one per new memory that fits the model's window, one per chunk of "
        "a longer one), the field naming where to split the request.",
    },
    409: {
        "description": "An id names another memory: stored with other content (ids are "
        "immutable), or given twice in this request with a field different (`error.field` "
        "names the later item, e.g. `memories.3.id`); or the space is being erased. Nothing "
        "was written. An id given twice for the same memory is stored once, the later item "
        "`unchanged`.",
    },
    503: {
        "description": "Overloaded, Neo4j unavailable, or the request ran past its deadline "
        "(`deadline_exceeded`, MNEMOGRAPH_INGEST_DEADLINE_SECONDS, 600 s by default: nothing "
        "was written, and `Retry-After` is the deadline's length): retry after `Retry-After` "
        "seconds.",
    },
}


@router.post(
    "/sessions", response_model=IngestResponse, status_code=201, responses=_WRITE_RESPONSES
)
def ingest_session(
    space: SpacePath, body: SessionCreate, services: ServicesDep, request: Request
) -> IngestResponse:
    """Store one conversation session with its turns, in one transaction. Re-sending the same
    ids is idempotent (`unchanged`); every turn gets a decision with its reason. A turn may be
    up to 4,000,000 characters: it is stored verbatim, and indexed as chunks when it is longer
    than the embedding model's window."""
    deadline = ingest_deadline(request, services.settings)
    result = services.ingestor.ingest_session(space, body.to_session(), body.options(), deadline)
    return IngestResponse.model_validate(result)


@router.post(
    "/memories", response_model=IngestResponse, status_code=201, responses=_WRITE_RESPONSES
)
def add_memories(
    space: SpacePath, body: MemoriesCreate, services: ServicesDep, request: Request
) -> IngestResponse:
    """Store one or many free memories (notes, facts, documents, whole files) in one
    transaction. A memory may be up to 4,000,000 characters: it is stored verbatim, and indexed
    as chunks when it is longer than the embedding model's window."""
    deadline = ingest_deadline(request, services.settings)
    result = services.ingestor.add_memories(space, body.to_memories(), body.options(), deadline)
    return IngestResponse.model_validate(result)


@router.get("/memories/{memory_id}", response_model=MemoryDetail)
def get_memory(space: SpacePath, services: ServicesDep, memory_id: IdPath) -> MemoryDetail:
    """A memory with its entities, facts, stage, session, neighbours and supersession chain."""
    return browse.memory(services.engine.store, space, memory_id)


@router.delete("/memories/{memory_id}", response_model=MemoryDeleted)
def delete_memory(space: SpacePath, services: ServicesDep, memory_id: IdPath) -> MemoryDeleted:
    """Delete a memory, its facts and the entity counts and co-occurrences it contributed."""
    deleted = browse.delete_memory(services.engine.store, space, memory_id, history.keep_history)
    return MemoryDeleted(id=memory_id, deleted=deleted)
