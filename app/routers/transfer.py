"""Export and import of a space (JSON Lines): backup, restore, moving between servers."""

from __future__ import annotations

import json
from collections.abc import Iterator

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from app.schemas.common import SpacePath
from app.services import ServicesDep
from mnemograph.schema import ImportResult, TransferCounts
from pipelines import spaces
from pipelines.transfer import export, load
from pipelines.transfer.load import ImportBatch

router = APIRouter(prefix="/v1/spaces/{space}", tags=["transfer"])


@router.get("/export", response_class=StreamingResponse)
def export_space(
    space: SpacePath,
    services: ServicesDep,
    embeddings: bool = Query(False, description="Include embeddings and token vectors."),
) -> StreamingResponse:
    """The space as JSON Lines: a header, the space, every node, every relationship, then
    their counts. Without embeddings an import re-embeds the memories."""
    spaces.require(services.engine.store, space)
    records = export.records(services.engine.store, space, embeddings)

    def lines() -> Iterator[str]:
        for record in records:
            yield json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"

    return StreamingResponse(lines(), media_type="application/x-ndjson")


@router.get("/export/counts", response_model=TransferCounts)
def export_counts(space: SpacePath, services: ServicesDep) -> TransferCounts:
    """What an export of the space holds, by label and relationship type."""
    return TransferCounts.model_validate(export.counts(services.engine.store, space))


@router.post("/import", response_model=ImportResult)
def import_space(space: SpacePath, body: ImportBatch, services: ServicesDep) -> ImportResult:
    """Write a batch of an export's records into the space in one transaction (idempotent:
    sending it again changes nothing). The first batch must carry the ``space`` record when
    the space does not exist yet."""
    written = load.import_records(
        services.engine.store,
        services.embedder,
        services.ingestor.config,
        space,
        body.records,
    )
    return ImportResult.model_validate(written)
