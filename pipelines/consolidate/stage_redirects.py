"""Stage ids stay resolvable after the communities job re-groups sessions.

Ingest returns the ids of the stages it assigns (time-gap stages). The communities job moves
sessions into topical stages and deletes the derived stages it leaves empty. So that an id a
client holds never silently stops resolving:

1. a stage a unit leaves records where it went (``moved_to``), in the move's own transaction,
   so a run that crashes half way loses nothing;
2. when an emptied stage is deleted, every live stage that received its units (following
   ``moved_to`` through stages deleted at the same time) lists its id, and the ids it had
   absorbed itself, in ``absorbed``, in the deleting transaction;
3. the stage read (``browse.stage``, statement ``read/stage_successors``) follows an absorbed id to
   the live stages that absorbed it, the largest first (``redirected_from`` / ``merged_into``).

A stage emptied only by deletions (none of its units moved anywhere) is deleted without a
record: its content is gone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipelines.graph import Tx


@dataclass(frozen=True)
class EmptiedStage:
    id: str
    moved_to: tuple[str, ...]
    absorbed: tuple[str, ...] = ()


def absorb_plan(emptied: Sequence[EmptiedStage]) -> dict[str, list[str]]:
    """Live target stage id -> the deleted ids it absorbs (pure). A target that is itself
    being deleted passes them on to its own targets."""
    by_id = {e.id: e for e in emptied}

    def live_targets(sid: str, seen: frozenset[str]) -> set[str]:
        out: set[str] = set()
        for t in by_id[sid].moved_to:
            if t in by_id:
                if t not in seen:
                    out |= live_targets(t, seen | {t})
            else:
                out.add(t)
        return out

    plan: dict[str, list[str]] = {}
    for e in emptied:
        for target in sorted(live_targets(e.id, frozenset({e.id}))):
            ids = plan.setdefault(target, [])
            for x in (e.id, *e.absorbed):
                if x not in ids and x != target:
                    ids.append(x)
    return plan


def retire_emptied(tx: Tx, space: str) -> dict[str, int]:
    """Delete the space's emptied derived stages (with their schemas) after recording where
    their units went. Returns ``stages_deleted``, ``schemas_deleted``, ``stage_ids_redirected``."""
    emptied = [
        EmptiedStage(r["id"], tuple(r["moved_to"]), tuple(r["absorbed"]))
        for r in tx.run("consolidate/stages_emptied", space=space)
    ]
    plan = absorb_plan(emptied)
    if plan:
        tx.run(
            "consolidate/stages_absorb",
            space=space,
            rows=[{"target": t, "ids": ids} for t, ids in sorted(plan.items())],
        )
    cleaned = tx.run("consolidate/stages_cleanup", space=space)[0]
    redirected = {x for ids in plan.values() for x in ids}
    return {
        "stages_deleted": int(cleaned["stages"]),
        "schemas_deleted": int(cleaned["schemas"]),
        "stage_ids_redirected": sum(e.id in redirected for e in emptied),
    }
