"""Retention: per-space policies that archive old raw conversation while keeping knowledge.

A space's policy lives in its settings (``{"retention": {...}}``, :class:`RetentionPolicy`),
for example ``{"archive_after_days": 90}``: active memories of the policy's ``kinds`` (raw
``turn``\\ s by default) whose event time is older than that are archived - ``status =
'archived'``, so they leave default recall - unless they are important enough
(``keep_min_importance``) or were recalled recently (``keep_accessed_within_days``). Facts
extracted from them and stage schemas are never touched. With ``delete_archived_after_days``
memories archived by retention longer ago than that are deleted (their facts stay, marked
``source_deleted``).

Without a policy the job does nothing. It is a **dry run by default** (the API and the CLI
must ask for ``dry_run: false``; the scheduler applies a policy only when it sets ``apply``).
"""

from __future__ import annotations

from datetime import timedelta
from functools import partial

from pipelines import session_documents, spaces
from pipelines.consolidate.context import JobContext
from pipelines.graph import Tx


def run(ctx: JobContext) -> None:
    policy = ctx.retention
    cfg = ctx.config.retention
    if policy.archive_after_days is None and policy.delete_archived_after_days is None:
        ctx.counts["no_policy"] = 1
        return
    if policy.archive_after_days is not None:
        ids = [
            r["id"]
            for r in ctx.store.read(
                "consolidate/retention_candidates",
                space=ctx.space,
                kinds=list(policy.kinds),
                cutoff=ctx.now - timedelta(days=policy.archive_after_days),
                min_importance=policy.keep_min_importance,
                accessed_since=(
                    ctx.now - timedelta(days=policy.keep_accessed_within_days)
                    if policy.keep_accessed_within_days is not None
                    else None
                ),
            )
        ]
        for mid in ids:
            ctx.note({"archive": mid})
        if ctx.dry_run:
            ctx.counts["to_archive"] = len(ids)
        else:
            for start in range(0, len(ids), cfg.batch_size):
                ctx.counts["archived"] += spaces.write_locked(
                    ctx.store,
                    ctx.space,
                    "consolidate/retention_archive",
                    ids=ids[start : start + cfg.batch_size],
                    now=ctx.now,
                )[0]["archived"]
                ctx.checkpoint(f"retention:archive:{start}")
    if policy.delete_archived_after_days is not None:
        ids = [
            r["id"]
            for r in ctx.store.read(
                "consolidate/retention_expired",
                space=ctx.space,
                cutoff=ctx.now - timedelta(days=policy.delete_archived_after_days),
            )
        ]
        for mid in ids:
            ctx.note({"delete": mid})
        if ctx.dry_run:
            ctx.counts["to_delete"] = len(ids)
        else:
            for start in range(0, len(ids), cfg.batch_size):
                batch = ids[start : start + cfg.batch_size]
                ctx.counts["deleted"] += ctx.store.write_tx(
                    partial(_delete_archived, space=ctx.space, ids=batch)
                )
                ctx.checkpoint(f"retention:delete:{start}")


def _delete_archived(tx: Tx, space: str, ids: list[str]) -> int:
    """Delete archived memories; their sessions' documents lose their texts in the same
    transaction."""
    spaces.lock_for_write(tx, space)
    row = tx.run("consolidate/retention_delete", space=space, ids=ids)[0]
    session_documents.refresh(tx, space, row["sessions"])
    return int(row["deleted"])
