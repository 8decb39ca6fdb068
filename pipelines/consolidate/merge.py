"""Merge job: near-duplicate memories collapse into one canonical memory, undoably.

Candidates are found lexically, without one vector query per memory
(:func:`lexical_pairs`): the rule's lexical part must hold anyway, so memories are grouped by
what must be equal (names, numbers, negation; speaker, role, kind) and, within a group, paired
when their content words are similar enough (prefix filtering). Only those pairs' embeddings are
read. A pair is a near-duplicate only when the write gate's own rule says so
(:func:`pipelines.ingest.gate.near_duplicate`: cosine >= ``similarity``, content-word Jaccard
>= ``lexical``, the same numbers, the same capitalised names and the same negation - so "I live
in Paris" never merges into "I live in London") and, by default, both have the same speaker,
role and kind.

Clusters are stars, never chains: memories are visited in time order (event time, ingestion
time, id); an unassigned memory becomes a canonical and takes every later unassigned memory
that qualifies *with it directly*. The earliest statement stays canonical.

A merge writes, in one transaction: a ``(:Merge)`` record (canonical, duplicates, their prior
statuses, similarities, the canonical's counters before and after), ``status = 'merged'`` and
``(dup)-[:MERGED_INTO {merge_id}]->(canonical)`` on the duplicates, and the counters the
canonical absorbs (restatements, access count, max heat, max importance). Duplicates keep their
text, edges and facts. :func:`undo_merge` restores all of it exactly and keeps the record as
``undone``, which also stops the job from merging the same pair again.

Incremental: memories ingested before the space's watermark were already compared with
everything older, so later runs keep only candidate pairs involving a newer one (a crashed run
leaves the watermark where it was and the next run redoes its share; applied merges are skipped
because their duplicates are no longer active).
"""

from __future__ import annotations

import json
import logging
import math
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from pipelines import spaces
from pipelines.consolidate import entity_merge
from pipelines.consolidate.config import MergeConfig
from pipelines.consolidate.context import JobContext
from pipelines.consolidate.records import Merge, MergeDetail, MergeUndone
from pipelines.engine import Engine
from pipelines.errors import Conflict, NotFound
from pipelines.graph import Tx, to_native
from pipelines.ingest.config import GateConfig
from pipelines.ingest.gate import DuplicateCandidate, near_duplicate, text_profile

ABSORBED = ("restatements", "access_count", "heat", "importance")

log = logging.getLogger("mnemograph.consolidate")
M = TypeVar("M", bound=BaseModel)


def _from_ms(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000.0, UTC)


def _ms(value: int | None) -> float:
    return value / 1000.0 if value is not None else float("inf")


@dataclass(frozen=True, slots=True)
class MemoryInfo:
    id: str
    text: str
    speaker: str | None
    role: str | None
    kind: str | None
    event_time: datetime | None
    ingested_at: datetime | None
    embedding: Sequence[float]

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> MemoryInfo:
        return cls(
            id=row["id"],
            text=row["text"] or "",
            speaker=row.get("speaker"),
            role=row.get("role"),
            kind=row.get("kind"),
            event_time=to_native(row.get("event_time")),
            ingested_at=to_native(row.get("ingested_at")),
            embedding=row["embedding"],
        )

    def order_key(self) -> tuple[float, float, str]:
        def ts(t: datetime | None) -> float:
            return t.timestamp() if t is not None else float("inf")

        return (ts(self.event_time), ts(self.ingested_at), self.id)


@dataclass(frozen=True, slots=True)
class MergePlan:
    canonical: str
    duplicates: tuple[str, ...]
    similarities: tuple[float, ...]
    lexical: tuple[float, ...]


def _speaker(value: str | None) -> str | None:
    return value.casefold().strip() if value else None


def qualifies(a: MemoryInfo, b: MemoryInfo, config: MergeConfig) -> tuple[float, float] | None:
    """(cosine, lexical) when ``b`` is a near-duplicate of ``a``, else ``None``."""
    if config.same_speaker and (
        _speaker(a.speaker) != _speaker(b.speaker) or a.role != b.role or a.kind != b.kind
    ):
        return None
    gate = GateConfig(merge_similarity=config.similarity, merge_lexical=config.lexical)
    candidate = DuplicateCandidate(b.id, b.text, b.embedding)
    match = near_duplicate(a.embedding, a.text, [candidate], gate)
    if match is None:
        return None
    return match.cosine, match.lexical


def plan_merges(
    infos: Mapping[str, MemoryInfo],
    pairs: Iterable[tuple[str, str]],
    config: MergeConfig,
    blocked: Iterable[frozenset[str]] = (),
) -> list[MergePlan]:
    """Star clusters over the qualifying pairs (see the module docstring). Pure."""
    blocked_set = set(blocked)
    edges: dict[str, dict[str, tuple[float, float]]] = {}
    for x, y in pairs:
        if x == y or x not in infos or y not in infos or frozenset((x, y)) in blocked_set:
            continue
        a, b = sorted((infos[x], infos[y]), key=MemoryInfo.order_key)
        if b.id in edges.get(a.id, {}):
            continue
        score = qualifies(a, b, config)
        if score is not None:
            edges.setdefault(a.id, {})[b.id] = score
            edges.setdefault(b.id, {})[a.id] = score
    assigned: set[str] = set()
    plans: list[MergePlan] = []
    for info in sorted((infos[i] for i in edges), key=MemoryInfo.order_key):
        if info.id in assigned:
            continue
        later = sorted(
            (
                infos[o]
                for o in edges[info.id]
                if o not in assigned and infos[o].order_key() > info.order_key()
            ),
            key=MemoryInfo.order_key,
        )
        if not later:
            continue
        assigned.add(info.id)
        assigned.update(d.id for d in later)
        plans.append(
            MergePlan(
                canonical=info.id,
                duplicates=tuple(d.id for d in later),
                similarities=tuple(round(edges[info.id][d.id][0], 6) for d in later),
                lexical=tuple(round(edges[info.id][d.id][1], 6) for d in later),
            )
        )
    return plans


def absorbed_counters(
    canonical: Mapping[str, Any], duplicates: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The canonical's counters after absorbing ``duplicates`` (rows with ``ABSORBED`` keys)."""
    restatements = int(canonical.get("restatements") or 0) + sum(
        1 + int(d.get("restatements") or 0) for d in duplicates
    )
    access = int(canonical.get("access_count") or 0) + sum(
        int(d.get("access_count") or 0) for d in duplicates
    )
    heats = [float(r["heat"]) for r in (canonical, *duplicates) if r.get("heat") is not None]
    imps = [
        float(r["importance"]) for r in (canonical, *duplicates) if r.get("importance") is not None
    ]
    return {
        "restatements": restatements,
        "access_count": access,
        "heat": max(heats) if heats else canonical.get("heat"),
        "importance": max(imps) if imps else canonical.get("importance"),
    }


def restore_map(
    current: Mapping[str, Any], before: Mapping[str, Any], after: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """What undo sets on the canonical: each absorbed property goes back to its value before
    the merge *unless it changed since* (then it is kept and listed)."""
    restore: dict[str, Any] = {}
    kept: list[str] = []
    for key in ABSORBED:
        if current.get(key) == after.get(key):
            restore[key] = before.get(key)
        else:
            kept.append(key)
    return restore, kept


# --------------------------------------------------------------------------- the job


def _blocked(undone: Iterable[Mapping[str, Any]]) -> set[frozenset[str]]:
    out: set[frozenset[str]] = set()
    for rec in undone:
        if rec.get("canonical") is None:
            continue
        for dup in rec.get("duplicates") or []:
            out.add(frozenset((rec["canonical"], dup)))
    return out


def _apply_batch(
    tx: Tx, space: str, plans: Sequence[MergePlan], now: datetime, by: str
) -> list[tuple[str, MergePlan]]:
    spaces.lock_for_write(tx, space)
    applied: list[tuple[str, MergePlan]] = []
    for plan in plans:
        ids = [plan.canonical, *plan.duplicates]
        state = {r["id"]: r for r in tx.run("consolidate/merge_state", space=space, ids=ids)}
        if any(state.get(i, {}).get("status") != "active" for i in ids):
            continue  # something changed since planning; the next run re-plans
        canonical = state[plan.canonical]
        dups = [state[d] for d in plan.duplicates]
        before = {k: canonical.get(k) for k in ABSORBED}
        after = absorbed_counters(canonical, dups)
        merge_id = f"merge-{uuid.uuid4().hex[:16]}"
        tx.run(
            "consolidate/merge_apply",
            space=space,
            id=merge_id,
            canonical=plan.canonical,
            duplicates=list(plan.duplicates),
            prior_statuses=[d["status"] for d in dups],
            similarities=list(plan.similarities),
            lexical=list(plan.lexical),
            reason="near-duplicate",
            by=by,
            now=now,
            before=json.dumps(before),
            after=json.dumps(after),
            canonical_set=after,
        )
        applied.append((merge_id, plan))
    return applied


@dataclass(frozen=True, slots=True)
class LexicalRecord:
    """One memory as the lexical blocking sees it."""

    id: str
    group: Any
    """What must be equal for a merge: the gate profile's names, numbers and negation (and
    speaker, role and kind when ``same_speaker``)."""
    normalised: str
    tokens: frozenset[str]
    order: tuple[float, float, str]
    fresh: bool = True

    @classmethod
    def from_row(cls, row: Mapping[str, Any], same_speaker: bool = True) -> LexicalRecord:
        """A ``consolidate/merge_rows`` row, ordered by event time, ingestion time, id."""
        # The write gate's own profile (the rule near_duplicate applies), so blocking never
        # disagrees with the final check.
        prof = text_profile(row["text"] or "")
        group: Any = (prof.names, prof.numbers, prof.negated)
        if same_speaker:
            group = (_speaker(row["speaker"]), row["role"], row["kind"], *group)
        order = (_ms(row["event_ms"]), _ms(row["ingested_ms"]), row["id"])
        return cls(row["id"], group, prof.normalised, prof.content, order, bool(row["fresh"]))


def lexical_pairs(records: Sequence[LexicalRecord], threshold: float) -> set[tuple[str, str]]:
    """Candidate pairs for the near-duplicate rule, found exactly and cheaply. Pure.

    Every pair that can satisfy the rule's lexical part is returned: same group (names,
    numbers, negation, speaker...) and content-word Jaccard >= ``threshold``. Memories with the
    same normalised text are collapsed first (each joins the earliest of its text); between
    distinct texts, prefix filtering finds the similar ones (tokens ordered rarest first: two
    sets that similar share a token among their first ``|x| - ceil(t|x|) + 1``) and the
    earliest memory of each text is paired with every memory of the other. Only pairs involving
    a fresh record are kept.
    """
    by_text: dict[tuple[Any, str], list[LexicalRecord]] = {}
    for r in records:
        by_text.setdefault((r.group, r.normalised), []).append(r)
    out: set[tuple[str, str]] = set()

    def add(x: LexicalRecord, y: LexicalRecord) -> None:
        if x.id != y.id and (x.fresh or y.fresh):
            out.add((x.id, y.id) if x.id < y.id else (y.id, x.id))

    reps: list[list[LexicalRecord]] = []
    for members in by_text.values():
        members.sort(key=lambda r: r.order)
        for m in members[1:]:
            add(members[0], m)
        reps.append(members)
    freq: Counter[str] = Counter(t for ms in reps for t in ms[0].tokens)
    index: dict[tuple[Any, str], list[int]] = defaultdict(list)
    for i, ms in enumerate(reps):
        seq = sorted(ms[0].tokens, key=lambda t: (freq[t], t))
        prefix = len(seq) - math.ceil(threshold * len(seq) - 1e-9) + 1 if seq else 0
        for t in seq[: max(prefix, 0)]:
            index[(ms[0].group, t)].append(i)
    seen: set[tuple[int, int]] = set()
    for posting in index.values():
        for x in range(len(posting)):
            a = reps[posting[x]]
            ta = a[0].tokens
            for y in range(x + 1, len(posting)):
                key = (posting[x], posting[y])
                if key in seen:
                    continue
                seen.add(key)
                b = reps[posting[y]]
                tb = b[0].tokens
                small, large = sorted((len(ta), len(tb)))
                if small < threshold * large - 1e-9:
                    continue
                if len(ta & tb) < threshold * len(ta | tb) - 1e-9:
                    continue
                for m in b:
                    add(a[0], m)
                for m in a:
                    add(b[0], m)
    return out


def run(ctx: JobContext) -> None:
    cfg = ctx.config.merge
    head = ctx.store.read("consolidate/merge_watermark", space=ctx.space)[0]
    watermark = head["watermark"]
    db_now = to_native(head["now"])
    blocked = _blocked(head["undone"])
    sizes = ctx.store.read("consolidate/merge_counts", space=ctx.space, watermark=watermark)[0]
    ctx.counts["checked"] = sizes["fresh"]
    ctx.counts["compared_with"] = sizes["active"]
    if not sizes["fresh"]:
        return  # nothing new since the last run: every pair was already considered
    rows = ctx.store.read("consolidate/merge_rows", space=ctx.space, watermark=watermark)
    records = [LexicalRecord.from_row(r, cfg.same_speaker) for r in rows]
    pairs = lexical_pairs(records, cfg.lexical)
    ctx.counts["candidate_pairs"] = len(pairs)
    ctx.checkpoint("merge:candidates")
    plans = plan_merges(_candidate_infos(ctx, rows, pairs), sorted(pairs), cfg, blocked)
    ctx.counts["planned_merges"] = len(plans)
    ctx.counts["planned_duplicates"] = sum(len(p.duplicates) for p in plans)
    if ctx.dry_run:
        for p in plans:
            ctx.note({"canonical": p.canonical, "duplicates": list(p.duplicates)})
        return
    _apply(ctx, plans)
    next_mark = (db_now or datetime.now(UTC)) - timedelta(seconds=cfg.recheck_margin_seconds)
    spaces.write_locked(
        ctx.store, ctx.space, "consolidate/merge_set_watermark", watermark=next_mark
    )


def _candidate_infos(
    ctx: JobContext, rows: Sequence[Mapping[str, Any]], pairs: Iterable[tuple[str, str]]
) -> dict[str, MemoryInfo]:
    """The memories of the candidate pairs with their embeddings, read in batches (a memory
    whose embedding is gone meanwhile is left out)."""
    batch_size = ctx.config.merge.batch_size
    by_id = {r["id"]: r for r in rows}
    involved = sorted({i for p in pairs for i in p})
    infos: dict[str, MemoryInfo] = {}
    for start in range(0, len(involved), batch_size):
        for r in ctx.store.read(
            "consolidate/merge_embeddings",
            space=ctx.space,
            ids=involved[start : start + batch_size],
        ):
            if r["embedding"] is not None:
                row = by_id[r["id"]]
                infos[r["id"]] = MemoryInfo.from_row(
                    {
                        **row,
                        "event_time": _from_ms(row["event_ms"]),
                        "ingested_at": _from_ms(row["ingested_ms"]),
                        "embedding": r["embedding"],
                    }
                )
    return infos


def _apply(ctx: JobContext, plans: Sequence[MergePlan]) -> None:
    """Write the plans in transactions of ``write_batch``, noting each merge applied."""
    write_batch = ctx.config.merge.write_batch
    for start in range(0, len(plans), write_batch):
        batch = plans[start : start + write_batch]
        applied = ctx.store.write_tx(
            partial(_apply_batch, space=ctx.space, plans=batch, now=ctx.now, by="job:merge")
        )
        ctx.counts["merges"] += len(applied)
        ctx.counts["merged"] += sum(len(p.duplicates) for _, p in applied)
        for merge_id, p in applied:
            ctx.note(
                {"merge_id": merge_id, "canonical": p.canonical, "duplicates": list(p.duplicates)}
            )
        ctx.checkpoint(f"merge:write:{start}")


# --------------------------------------------------------------------------- undo / read


def _stored(merge: dict[str, Any], model: type[M]) -> M | None:
    """A stored merge as ``model``: absent properties take their defaults, JSON text that
    does not decode reads as empty; ``None`` for one too malformed to read (an import
    checks merges, so only a database edited by hand holds one): never a 422 for a read."""
    out = {k: v for k, v in merge.items() if v is not None}
    for key in ("canonical_before", "canonical_after"):
        if key in out:
            try:
                decoded = json.loads(out[key]) if isinstance(out[key], str) else None
            except ValueError:
                decoded = None
            out[key] = decoded if isinstance(decoded, dict) else {}
    try:
        return model.model_validate(out)
    except ValidationError:
        log.warning("merge %r is malformed in the store; left out", merge.get("id"))
        return None


def get_merge(engine: Engine, space: str, merge_id: str) -> MergeDetail:
    rows = engine.store.read("consolidate/merge_get", space=space, id=merge_id)
    found = _stored(rows[0]["merge"], MergeDetail) if rows else None
    if found is None:
        spaces.require(engine.store, space)
        raise NotFound(f"merge {merge_id!r} does not exist in space {space!r}", field="id")
    return found


def list_merges(
    engine: Engine, space: str, status: str | None = None, skip: int = 0, limit: int = 50
) -> list[Merge]:
    spaces.require(engine.store, space)
    rows = engine.store.read(
        "consolidate/merge_list", space=space, status=status, skip=skip, limit=limit
    )
    return [m for r in rows if (m := _stored(r["merge"], Merge)) is not None]


def undo_merge(engine: Engine, space: str, merge_id: str, by: str = "api") -> MergeUndone:
    """Undo one merge exactly (see the module docstring). 404 unknown, 409 already undone."""
    merge = get_merge(engine, space, merge_id)
    if merge.status != "applied":
        raise Conflict(f"merge {merge_id!r} is already {merge.status}", field="id")
    if merge.kind == "entity":
        return entity_merge.undo(engine, space, merge, by)
    now = datetime.now(UTC)

    def work(tx: Tx) -> tuple[int, list[str]]:
        spaces.lock_for_write(tx, space)
        current = tx.run("consolidate/merge_state", space=space, ids=[merge.canonical])
        if not current:
            raise Conflict(f"canonical memory {merge.canonical!r} no longer exists", field="id")
        restore, kept = restore_map(current[0], merge.canonical_before, merge.canonical_after)
        rows = tx.run(
            "consolidate/merge_undo", space=space, id=merge_id, restore=restore, now=now, by=by
        )
        if not rows:
            raise Conflict(f"merge {merge_id!r} is no longer applied", field="id")
        return int(rows[0]["restored"]), kept

    restored, kept = engine.store.write_tx(work)
    return MergeUndone(
        id=merge_id,
        status="undone",
        canonical=merge.canonical,
        duplicates=merge.duplicates,
        restored=restored,
        kept_changed_properties=kept,
    )
