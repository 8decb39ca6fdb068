"""Entity merge job: a person's short forms and misspellings resolve to one entity, undoably.

The job reads the space's person-like entities (mentions, co-occurring neighbours, who said
them) and its speakers, and merges each alias the evidence supports into its canonical entity
(:func:`pipelines.consolidate.entity_aliases.alias_pairs`: "Mel" and "Mell" into "Melanie",
"Caro" into "Caroline"). One merge is one transaction
(``consolidate/entity_merge_apply``): the alias's ``MENTIONS`` and ``CO_OCCURS`` edges move to
the canonical, the alias node stays as a redirect (``merged_into``,
``(alias)-[:ALIAS_OF]->(canonical)``) so that later ingests write its mentions to the canonical
and recall resolves the alias's name, and a ``(:Merge {kind: 'entity'})`` record keeps the
evidence (its ``reason``) and what undo needs. Entity merges are listed and undone with memory
merges (``GET /merges``, ``POST /merges/{id}/undo``); an undone pair is never merged again.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from pipelines import spaces
from pipelines.consolidate.context import JobContext
from pipelines.consolidate.entity_aliases import CONFUSED_WITH_PERSON, EntityProfile, alias_pairs
from pipelines.consolidate.records import MergeDetail, MergeUndone
from pipelines.engine import Engine
from pipelines.errors import Conflict
from pipelines.graph import Tx

NEIGHBOURS = 50  # co-occurring entities read per entity for the neighbourhood evidence


def _profile(row: Mapping[str, Any]) -> EntityProfile:
    by_speaker: dict[str, int] = {}
    for part in row["by_speaker"]:
        by_speaker[part["speaker"]] = by_speaker.get(part["speaker"], 0) + int(part["n"])
    return EntityProfile(
        key=row["key"],
        name=row["name"] or row["key"],
        kind=row["kind"] or "",
        mentions=int(row["mentions"]),
        neighbours=frozenset(row["neighbours"]),
        by_speaker=by_speaker,
    )


def run(ctx: JobContext) -> None:
    cfg = ctx.config.entity_merge
    if not cfg.enabled:
        ctx.counts["skipped_disabled"] = 1
        return
    head = ctx.store.read("consolidate/entity_merge_speakers", space=ctx.space)[0]
    speakers = frozenset(s for s in head["speakers"] if s)
    blocked = frozenset((a, c) for a, c in head["blocked"] if a and c)
    rows = ctx.store.read(
        "consolidate/entity_merge_profiles",
        space=ctx.space,
        kinds=sorted(CONFUSED_WITH_PERSON),
        neighbours=NEIGHBOURS,
    )
    profiles = [_profile(r) for r in rows]
    ctx.counts["entities_read"] = len(profiles)
    pairs = alias_pairs(
        profiles,
        speakers,
        blocked,
        min_prefix=cfg.min_prefix,
        min_fuzzy=cfg.min_fuzzy,
        min_addressed=cfg.min_addressed,
        min_neighbour_jaccard=cfg.min_neighbour_jaccard,
    )[: cfg.max_merges]
    ctx.counts["to_merge" if ctx.dry_run else "candidates"] = len(pairs)
    for ev in pairs:
        ctx.note({"alias": ev.alias, "canonical": ev.canonical, "reason": ev.reason})
    if ctx.dry_run:
        return
    merged = 0
    for ev in pairs:
        rows = spaces.write_locked(
            ctx.store,
            ctx.space,
            "consolidate/entity_merge_apply",
            alias=ev.alias,
            canonical=ev.canonical,
            id=f"entity-merge:{uuid.uuid4().hex[:16]}",
            score=ev.score,
            reason=ev.reason,
            by="job:entity_merge",
            now=ctx.now,
        )
        merged += len(rows)
        ctx.checkpoint(f"entity_merge:{ev.alias}")
    ctx.counts["merged"] = merged


def undo(engine: Engine, space: str, merge: MergeDetail, by: str = "api") -> MergeUndone:
    """Undo one applied entity merge (``consolidate/entity_merge_undo``)."""
    now = datetime.now(UTC)

    def work(tx: Tx) -> int:
        spaces.lock_for_write(tx, space)
        rows = tx.run("consolidate/entity_merge_undo", space=space, id=merge.id, now=now, by=by)
        if not rows:
            raise Conflict(f"merge {merge.id!r} is no longer applied", field="id")
        return int(rows[0]["restored"])

    restored = engine.store.write_tx(work)
    return MergeUndone(
        id=merge.id,
        status="undone",
        canonical=merge.canonical,
        duplicates=merge.duplicates,
        restored=restored,
    )
