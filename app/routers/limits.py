"""``GET /v1/limits``: the write path's request limits, so clients split a large import into
requests that fit (read-only; nothing about the data)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from app.services import ServicesDep

router = APIRouter(prefix="/v1", tags=["limits"])


class Limits(BaseModel):
    max_items_per_request: int = Field(description="Most turns (or memories) in one request.")
    max_content_chars: int = Field(description="Longest content of one memory, in characters.")
    max_request_chars: int = Field(description="Most content characters in one request.")
    max_request_bytes: int = Field(
        description="Largest request body (MNEMOGRAPH_MAX_REQUEST_BYTES)."
    )
    max_embedding_inputs: int = Field(
        description="Most texts the model may read for one request: one per new memory that "
        "fits its window, one per chunk of a longer one (MNEMOGRAPH_INGEST_MAX_EMBEDDING_INPUTS)."
    )
    embedding_window: int = Field(
        description="The embedding model's window in word pieces (a text with no more "
        "characters than this fits it whole; a longer one may be chunked)."
    )
    ingest_deadline_seconds: float = Field(
        description="Longest an ingest request may work (MNEMOGRAPH_INGEST_DEADLINE_SECONDS)."
    )


@router.get("/limits", response_model=Limits)
def limits(services: ServicesDep) -> Limits:
    """The limits every ingest request must fit (the SDK and `mnemograph ingest` read them to
    split a large import)."""
    config = services.ingestor.config
    return Limits(
        max_items_per_request=config.max_turns_per_request,
        max_content_chars=config.max_content_chars,
        max_request_chars=config.max_request_chars,
        max_request_bytes=services.settings.max_request_bytes,
        max_embedding_inputs=config.max_embedding_inputs,
        embedding_window=int(getattr(services.embedder, "max_tokens", 0) or 256),
        ingest_deadline_seconds=services.settings.ingest_deadline_seconds,
    )
