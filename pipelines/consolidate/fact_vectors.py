"""Fact-vectors job: embed the facts that ingest stored without an embedding.

Ingest embeds the facts of ``FactConfig.embedded_categories`` (context assembly recalls them as
its compact tier, :mod:`pipelines.assemble.facts`). Facts stored before that, or imported
without vectors, have none and are never recalled. This job pages through them by id, embeds
``batch_size`` at a time as ingest would, and writes each batch in one transaction. It plans
from the graph every time, so an interrupted run is finished by the next one; a second run
writes nothing. A dry run counts what it would fill. Nothing is deleted or overwritten.
"""

from __future__ import annotations

import logging

from pipelines import spaces
from pipelines.consolidate.context import JobContext
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG

log = logging.getLogger("mnemograph.consolidate.fact_vectors")


def run(ctx: JobContext) -> None:
    store = ctx.store
    categories = sorted(DEFAULT_INGEST_CONFIG.facts.embedded_categories)
    pending = int(
        store.read("consolidate/fact_vectors_count", space=ctx.space, categories=categories)[0][
            "pending"
        ]
    )
    ctx.counts["pending"] = pending
    if ctx.dry_run or not pending:
        return
    batch = ctx.config.fact_vectors.batch_size
    after = ""
    while True:
        rows = store.read(
            "consolidate/fact_vectors_pending",
            space=ctx.space,
            categories=categories,
            after=after,
            limit=batch,
        )
        if not rows:
            break
        after = rows[-1]["id"]
        vectors = ctx.engine.embedder.encode([r["text"] for r in rows])
        written = spaces.write_locked(
            store,
            ctx.space,
            "consolidate/fact_vectors_write",
            rows=[
                {"id": r["id"], "text": r["text"], "embedding": [float(x) for x in vec]}
                for r, vec in zip(rows, vectors, strict=True)
            ],
        )[0]["written"]
        ctx.counts["filled"] += int(written)
        ctx.counts["skipped"] += len(rows) - int(written)
        if len(ctx.sample) < ctx.sample_size:
            ctx.note({"batch_after": rows[0]["id"], "facts": len(rows), "written": written})
        log.info("fact vectors: %d of %d filled in %s", ctx.counts["filled"], pending, ctx.space)
        ctx.checkpoint(f"fact_vectors:{after}")
