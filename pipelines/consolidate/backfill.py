"""The loop the backfill jobs share (:mod:`~pipelines.consolidate.fact_vectors`,
:mod:`~pipelines.consolidate.token_vectors`): page through the pending nodes by id, compute a
page's values, write the page in one transaction, count, sample and checkpoint.

Each job names its statements ``consolidate/<job>_pending`` (rows with an ``id``, after
``$after``, at most ``$limit``) and ``consolidate/<job>_write`` (``$rows`` in, ``written``
out). Paging by id from the graph makes an interrupted run resumable by the next one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from pipelines import spaces
from pipelines.consolidate.context import JobContext
from pipelines.graph import Row

log = logging.getLogger("mnemograph.consolidate.backfill")


def backfill(
    ctx: JobContext,
    job: str,
    batch: int,
    compute: Callable[[list[Row]], list[dict[str, Any]]],
    params: Mapping[str, Any],
    unit: str,
) -> None:
    """Fill every pending node of ``job`` in ``ctx.space``, ``batch`` per transaction;
    ``compute`` turns a page of pending rows into the write's rows; ``params`` go to both
    statements; ``unit`` names what a sample entry counts."""
    pending = ctx.counts["pending"]
    after = ""
    while True:
        rows = ctx.store.read(
            f"consolidate/{job}_pending", space=ctx.space, after=after, limit=batch, **params
        )
        if not rows:
            break
        after = rows[-1]["id"]
        written = int(
            spaces.write_locked(
                ctx.store, ctx.space, f"consolidate/{job}_write", rows=compute(rows), **params
            )[0]["written"]
        )
        ctx.counts["filled"] += written
        ctx.counts["skipped"] += len(rows) - written
        if len(ctx.sample) < ctx.sample_size:
            ctx.note({"batch_after": rows[0]["id"], unit: len(rows), "written": written})
        log.info("%s: %d of %d filled in %s", job, ctx.counts["filled"], pending, ctx.space)
        ctx.checkpoint(f"{job}:{after}")
