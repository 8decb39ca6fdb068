"""Token-vectors job: fill in late-interaction token vectors that ingest did not store.

Ingest stores each memory's token vectors (:mod:`pipelines.models.late_interaction`) in the
forward pass that computes its embedding. Memories stored before that existed, with
``IngestConfig.token_vectors`` off, or in an older ``TOKEN_FORMAT`` have none in the current
format; recall's late-interaction step leaves them unscored. This job pages through them by
id, embeds ``batch_size`` at a time exactly as ingest would (speaker-attributed when
``embed_speaker``), and writes each batch in one transaction. It plans from the graph every
time, so an interrupted run is finished by the next one; a second run writes nothing.

A dry run counts what it would fill. Nothing is deleted or overwritten except token vectors
of another format.
"""

from __future__ import annotations

from typing import Any

from pipelines.consolidate.backfill import backfill
from pipelines.consolidate.context import JobContext
from pipelines.graph import Row
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG
from pipelines.ingest.text import embedding_input
from pipelines.models.late_interaction import TOKEN_FORMAT, pack


def run(ctx: JobContext) -> None:
    store = ctx.store
    pending = int(
        store.read("consolidate/token_vectors_count", space=ctx.space, token_format=TOKEN_FORMAT)[
            0
        ]["pending"]
    )
    ctx.counts["pending"] = pending
    if ctx.dry_run or not pending:
        return
    encode = getattr(ctx.engine.embedder, "encode_with_tokens", None)
    if encode is None:
        ctx.errors.append(
            f"the embedder ({type(ctx.engine.embedder).__name__}) cannot compute token vectors"
        )
        return
    embed_speaker = DEFAULT_INGEST_CONFIG.embed_speaker

    def compute(rows: list[Row]) -> list[dict[str, Any]]:
        texts = [embedding_input(r["text"], r["speaker"], with_speaker=embed_speaker) for r in rows]
        _, tokens = encode(texts)
        return [
            {"id": r["id"], "text": r["text"], "tokens": pack(t)}
            for r, t in zip(rows, tokens, strict=True)
        ]

    batch = ctx.config.token_vectors.batch_size
    backfill(ctx, "token_vectors", batch, compute, {"token_format": TOKEN_FORMAT}, "memories")
