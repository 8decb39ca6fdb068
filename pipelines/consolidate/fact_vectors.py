"""Fact-vectors job: embed the facts that ingest stored without an embedding.

Ingest embeds the facts of ``FactConfig.embedded_categories`` (context assembly recalls them as
its compact tier, :mod:`pipelines.assemble.facts`). Facts stored before that, or imported
without vectors, have none and are never recalled. This job pages through them by id, embeds
``batch_size`` at a time as ingest would, and writes each batch in one transaction. It plans
from the graph every time, so an interrupted run is finished by the next one; a second run
writes nothing. A dry run counts what it would fill. Nothing is deleted or overwritten.
"""

from __future__ import annotations

from typing import Any

from pipelines.consolidate.backfill import backfill
from pipelines.consolidate.context import JobContext
from pipelines.graph import Row
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG


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

    def compute(rows: list[Row]) -> list[dict[str, Any]]:
        vectors = ctx.engine.embedder.encode([r["text"] for r in rows])
        return [
            {"id": r["id"], "text": r["text"], "embedding": [float(x) for x in vec]}
            for r, vec in zip(rows, vectors, strict=True)
        ]

    batch = ctx.config.fact_vectors.batch_size
    backfill(ctx, "fact_vectors", batch, compute, {"categories": categories}, "facts")
