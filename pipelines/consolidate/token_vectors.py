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

import logging

from pipelines import spaces
from pipelines.consolidate.context import JobContext
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG
from pipelines.ingest.text import embedding_input
from pipelines.models.late_interaction import TOKEN_FORMAT, pack

log = logging.getLogger("mnemograph.consolidate.token_vectors")


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
    batch = ctx.config.token_vectors.batch_size
    after = ""
    while True:
        rows = store.read(
            "consolidate/token_vectors_pending",
            space=ctx.space,
            token_format=TOKEN_FORMAT,
            after=after,
            limit=batch,
        )
        if not rows:
            break
        after = rows[-1]["id"]
        _, tokens = encode(
            [embedding_input(r["text"], r["speaker"], with_speaker=embed_speaker) for r in rows]
        )
        written = spaces.write_locked(
            store,
            ctx.space,
            "consolidate/token_vectors_write",
            token_format=TOKEN_FORMAT,
            rows=[
                {"id": r["id"], "text": r["text"], "tokens": pack(t)}
                for r, t in zip(rows, tokens, strict=True)
            ],
        )[0]["written"]
        ctx.counts["filled"] += int(written)
        ctx.counts["skipped"] += len(rows) - int(written)
        if len(ctx.sample) < ctx.sample_size:
            ctx.note({"batch_after": rows[0]["id"], "memories": len(rows), "written": written})
        log.info("token vectors: %d of %d filled in %s", ctx.counts["filled"], pending, ctx.space)
        ctx.checkpoint(f"token_vectors:{after}")
