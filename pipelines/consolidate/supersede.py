"""Supersession: the latest truth wins, and the history stays readable and reversible.

Claims (:mod:`pipelines.consolidate.claims`) are read from every active memory. Claims of one
speaker about one attribute form a timeline ordered by event time, then ingestion time, then
turn index; a claim is superseded by the *next strictly later* claim whose value or polarity
differs ("I live in Paris" -> "I moved to Berlin" -> "I moved to Tokyo": Berlin supersedes
Paris, Tokyo supersedes Berlin). Restating the same value supersedes nothing (duplicates are
the merge job's business). The memories' embeddings must also be at least ``min_similarity``
alike - a sanity check; the rules carry the decision.

What is retired depends on how much the older memory says:

* **memory level** - every claim of the older memory is superseded by the same newer memory
  and those claims cover at least ``min_claim_coverage`` of its content words: the memory and
  its active facts become ``superseded`` and ``(newer)-[:SUPERSEDES]->(older)`` is written;
* **fact level** - otherwise (the memory says more that is still true), only the facts
  carrying the superseded claim are retired, ``(newer fact)-[:SUPERSEDES]->(older fact)``,
  when both memories have such a fact.

Explicit correction, revert and the reads of supersessions are
:mod:`pipelines.consolidate.supersessions`; a pair a revert undid is never proposed again.

Every ``SUPERSEDES`` edge carries ``id, kind, reason, at, by, rule, attribute, old_value,
new_value, prior_status, fact_ids, created_newer`` and its two times: ``valid_from`` (when the
newer version became true: the request's ``valid_from``, else the newer memory's event time)
and ``recorded_at`` (when the server recorded it, = ``at``). Recall and assembly read
``status``; ``as_of`` (valid time) and ``known_at`` (recorded time) read the two times
(``cypher/assemble/valid_at.cypher``).
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from pipelines import spaces
from pipelines.consolidate.claims import (
    Claim,
    candidate_pattern,
    claim_coverage,
    extract_claims,
    same_value,
)
from pipelines.consolidate.config import SupersedeConfig
from pipelines.consolidate.context import JobContext
from pipelines.graph import to_native

Order = tuple[float, float, int]


def _ts(value: Any) -> float:
    t = to_native(value)
    if isinstance(t, int | float):
        return t / 1000.0  # epoch milliseconds
    return t.timestamp() if isinstance(t, datetime) else float("-inf")


def speaker_key(speaker: str | None, role: str | None) -> str:
    """Whose claim it is: the speaker (case-folded), else the role."""
    return f"speaker:{speaker.casefold().strip()}" if speaker else f"role:{role or ''}"


@dataclass(frozen=True, slots=True)
class FactClaims:
    id: str
    claims: tuple[Claim, ...]


@dataclass(frozen=True, slots=True)
class ClaimedMemory:
    """One memory with its claims, as the planner sees it."""

    id: str
    speaker: str
    order: Order
    claims: tuple[Claim, ...]
    coverage: float
    facts: tuple[FactClaims, ...] = ()

    @classmethod
    def from_row(cls, row: Mapping[str, Any], facts: Sequence[FactClaims] = ()) -> ClaimedMemory:
        text = row.get("text") or ""
        claims = tuple(extract_claims(text))
        turn = row.get("turn_index")
        return cls(
            id=row["id"],
            speaker=speaker_key(row.get("speaker"), row.get("role")),
            order=(
                _ts(row.get("event_time", row.get("event_ms"))),
                _ts(row.get("ingested_at", row.get("ingested_ms"))),
                turn if turn else 0,
            ),
            claims=claims,
            coverage=claim_coverage(text, list(claims)),
            facts=tuple(facts),
        )


@dataclass(frozen=True, slots=True)
class PlannedSupersession:
    kind: str  # 'memory' | 'fact'
    older: str  # memory id or fact id
    newer: str
    older_memory: str
    newer_memory: str
    attribute: str
    old_value: str
    new_value: str
    rule: str
    reason: str


def _describe(c: Claim) -> str:
    value = c.display_value or c.value
    return value if c.positive else f"not {value}".strip()


@dataclass
class _Event:
    memory: ClaimedMemory
    claim: Claim
    superseded_by: tuple[ClaimedMemory, Claim] | None = field(default=None)


def plan_supersessions(
    memories: Iterable[ClaimedMemory],
    config: SupersedeConfig,
    blocked: Iterable[str] = (),
    similarity: Callable[[str, str], float | None] | None = None,
) -> list[PlannedSupersession]:
    """Which memories or facts the claims' timelines retire (module docstring). Pure.

    ``blocked`` holds ``"older>newer"`` id pairs never to propose; ``similarity(older, newer)``
    returns the memories' cosine (``None``: unknown, accepted).
    """
    blocked_set = set(blocked)

    def alike(older: str, newer: str) -> bool:
        sim = similarity(older, newer) if similarity is not None else None
        return sim is None or sim >= config.min_similarity

    by_memory, superseded = _superseded_events(memories)
    plans: list[PlannedSupersession] = []
    for mid in sorted(superseded, key=lambda m: (by_memory[m].order, m)):
        mem = by_memory[mid]
        events = superseded[mid]
        newer_ids = {ev.superseded_by[0].id for ev in events if ev.superseded_by}
        whole = (
            len(events) == len(mem.claims)
            and len(newer_ids) == 1
            and mem.coverage >= config.min_claim_coverage
        )
        if whole:
            newer_id = next(iter(newer_ids))
            if f"{mid}>{newer_id}" not in blocked_set and alike(mid, newer_id):
                plans.append(_planned("memory", mid, newer_id, mid, newer_id, events[0]))
            continue
        if not config.fact_level:
            continue
        for ev in events:
            assert ev.superseded_by is not None
            newer_mem, new_claim = ev.superseded_by
            old_fact = _fact_with(mem, ev.claim)
            new_fact = _fact_with(newer_mem, new_claim)
            if old_fact is None or new_fact is None or f"{old_fact}>{new_fact}" in blocked_set:
                continue
            if alike(mid, newer_mem.id):
                plans.append(_planned("fact", old_fact, new_fact, mid, newer_mem.id, ev))
    return plans


def _superseded_events(
    memories: Iterable[ClaimedMemory],
) -> tuple[dict[str, ClaimedMemory], dict[str, list[_Event]]]:
    """The memories with claims by id, and per memory its claims that the *next strictly
    later* claim of the same speaker and attribute contradicts (each marked with it)."""
    by_memory: dict[str, ClaimedMemory] = {}
    groups: dict[tuple[str, str], list[_Event]] = defaultdict(list)
    for mem in memories:
        if not mem.claims:
            continue
        by_memory[mem.id] = mem
        for claim in mem.claims:
            groups[(mem.speaker, claim.attribute)].append(_Event(mem, claim))
    superseded: dict[str, list[_Event]] = defaultdict(list)
    for events in groups.values():
        events.sort(key=lambda e: (e.memory.order, e.memory.id))
        for i, ev in enumerate(events):
            for later in events[i + 1 :]:
                if later.memory.order <= ev.memory.order:
                    continue  # not strictly later: order unknown, never retire
                if not same_value(ev.claim, later.claim):
                    ev.superseded_by = (later.memory, later.claim)
                    superseded[ev.memory.id].append(ev)
                    break
    return by_memory, superseded


def _planned(
    kind: str, older: str, newer: str, older_memory: str, newer_memory: str, ev: _Event
) -> PlannedSupersession:
    assert ev.superseded_by is not None
    new_claim = ev.superseded_by[1]
    return PlannedSupersession(
        kind=kind,
        older=older,
        newer=newer,
        older_memory=older_memory,
        newer_memory=newer_memory,
        attribute=ev.claim.attribute,
        old_value=_describe(ev.claim),
        new_value=_describe(new_claim),
        rule=new_claim.rule,
        reason=f"{ev.claim.attribute}: {_describe(ev.claim)} -> {_describe(new_claim)}",
    )


def _fact_with(mem: ClaimedMemory, claim: Claim) -> str | None:
    for fact in mem.facts:
        for c in fact.claims:
            if c.attribute == claim.attribute and same_value(c, claim) and c.value == claim.value:
                return fact.id
    return None


# --------------------------------------------------------------------------- the job


def _cosine(a: Sequence[float] | None, b: Sequence[float] | None) -> float | None:
    if a is None or b is None:
        return None
    va, vb = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    na, nb = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    if na == 0.0 or nb == 0.0:
        return None
    return float(va @ vb) / (na * nb)


def _write(ctx: JobContext, plan: PlannedSupersession) -> bool:
    params = {
        "id": f"sup-{uuid.uuid4().hex[:16]}",
        "older": plan.older,
        "newer": plan.newer,
        "reason": plan.reason,
        "now": ctx.now,
        "by": "job:supersede",
        "rule": plan.rule,
        "attribute": plan.attribute,
        "old_value": plan.old_value,
        "new_value": plan.new_value,
        "valid_from": None,  # valid from the newer memory's event time
    }
    if plan.kind == "memory":
        rows = spaces.write_locked(
            ctx.store,
            ctx.space,
            "consolidate/supersede_memory",
            **params,
            newer_statuses=["active", "superseded"],
            created_newer=False,
        )
    else:
        rows = spaces.write_locked(
            ctx.store,
            ctx.space,
            "consolidate/supersede_fact",
            **params,
            older_memory=plan.older_memory,
            newer_memory=plan.newer_memory,
        )
    return bool(rows)


def run(ctx: JobContext) -> None:
    cfg = ctx.config.supersede
    blocked = ctx.store.read("consolidate/supersede_blocked", space=ctx.space)
    blocked_pairs = blocked[0]["pairs"] if blocked else []
    rows = ctx.store.read(
        "consolidate/supersede_rows", space=ctx.space, pattern=candidate_pattern()
    )
    ctx.counts["candidates"] = len(rows)
    claimed = [ClaimedMemory.from_row(r) for r in rows]
    with_claims = {m.id: m for m in claimed if m.claims}
    ctx.counts["memories_with_claims"] = len(with_claims)
    # facts of memories with claims, for fact-level supersession
    facts: dict[str, list[FactClaims]] = defaultdict(list)
    ids = sorted(with_claims)
    for start in range(0, len(ids), cfg.page_size):
        for f in ctx.store.read(
            "consolidate/supersede_facts", space=ctx.space, ids=ids[start : start + cfg.page_size]
        ):
            fc = tuple(extract_claims(f["text"] or ""))
            if fc:
                facts[f["memory"]].append(FactClaims(f["id"], fc))
    memories = [
        ClaimedMemory(m.id, m.speaker, m.order, m.claims, m.coverage, tuple(facts.get(m.id, ())))
        for m in with_claims.values()
    ]
    draft = plan_supersessions(memories, cfg, blocked_pairs)
    involved = sorted({p.older_memory for p in draft} | {p.newer_memory for p in draft})
    vectors = {
        r["id"]: r["embedding"]
        for r in ctx.store.read("consolidate/supersede_embeddings", space=ctx.space, ids=involved)
    }
    plans = plan_supersessions(
        memories,
        cfg,
        blocked_pairs,
        similarity=lambda a, b: _cosine(vectors.get(a), vectors.get(b)),
    )
    ctx.counts["planned_memory"] = sum(p.kind == "memory" for p in plans)
    ctx.counts["planned_fact"] = sum(p.kind == "fact" for p in plans)
    for p in plans:
        ctx.note({"kind": p.kind, "older": p.older, "newer": p.newer, "reason": p.reason})
    if ctx.dry_run:
        return
    for i, plan in enumerate(plans):
        if _write(ctx, plan):
            ctx.counts[f"superseded_{plan.kind}"] += 1
        else:
            ctx.counts["skipped_changed"] += 1
        ctx.checkpoint(f"supersede:write:{i + 1}")
