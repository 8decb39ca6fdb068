"""Supersession: the latest truth wins, and the history stays readable and reversible.

**Automatic job.** Claims (:mod:`pipelines.consolidate.claims`) are read from every active
memory. Claims of one speaker about one attribute form a timeline ordered by event time, then
ingestion time, then turn index; a claim is superseded by the *next strictly later* claim whose
value or polarity differs ("I live in Paris" -> "I moved to Berlin" -> "I moved to Tokyo":
Berlin supersedes Paris, Tokyo supersedes Berlin). Restating the same value supersedes
nothing (duplicates are the merge job's business). The memories' embeddings must also be at
least ``min_similarity`` alike - a sanity check; the rules carry the decision.

What is retired depends on how much the older memory says:

* **memory level** - every claim of the older memory is superseded by the same newer memory
  and those claims cover at least ``min_claim_coverage`` of its content words: the memory and
  its active facts become ``superseded`` and ``(newer)-[:SUPERSEDES]->(older)`` is written;
* **fact level** - otherwise (the memory says more that is still true), only the facts
  carrying the superseded claim are retired, ``(newer fact)-[:SUPERSEDES]->(older fact)``,
  when both memories have such a fact.

**Explicit correction** (:func:`supersede_memory`): any active memory can be superseded by
another memory or by new content (stored as a new memory of the same speaker), with a reason.

**Revert** (:func:`revert_supersession`) removes the edge and restores the exact prior status
of the older memory and of the facts it retired (unless another supersession still retires
them); the pair is remembered on the space so the job does not propose it again. A correction
memory that the supersession created from content is archived on revert.

Every ``SUPERSEDES`` edge carries ``id, kind, reason, at, by, rule, attribute, old_value,
new_value, prior_status, fact_ids, created_newer`` and its two times: ``valid_from`` (when the
newer version became true: the request's ``valid_from``, else the newer memory's event time)
and ``recorded_at`` (when the server recorded it, = ``at``). Recall and assembly read
``status``; ``as_of`` (valid time) and ``known_at`` (recorded time) read the two times
(``cypher/assemble/valid_at.cypher``).
"""

from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from pipelines import spaces
from pipelines.consolidate.claims import (
    CANDIDATE_PATTERN,
    Claim,
    claim_coverage,
    extract_claims,
    same_value,
)
from pipelines.consolidate.config import SupersedeConfig
from pipelines.consolidate.context import JobContext
from pipelines.consolidate.records import (
    SupersedeResult,
    Supersession,
    SupersessionDetail,
    SupersessionReverted,
    TimelineEdge,
    TimelineEntry,
)
from pipelines.engine import Engine
from pipelines.errors import Conflict, InvalidInput, NotFound
from pipelines.graph import as_utc, to_native
from pipelines.ingest.service import IngestOptions, Ingestor, MemoryIn, Role

Order = tuple[float, float, int]
R = TypeVar("R", bound=BaseModel)
log = logging.getLogger(__name__)


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
    rows = ctx.store.read("consolidate/supersede_rows", space=ctx.space, pattern=CANDIDATE_PATTERN)
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


# --------------------------------------------------------------------------- explicit API


class SupersedeRequest(BaseModel):
    """An explicit correction: the memory that replaces one, or new content to store as it."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={
            "oneOf": [
                {"required": [a], "properties": {a: {"type": "string"}, b: {"type": "null"}}}
                for a, b in (("content", "by_memory_id"), ("by_memory_id", "content"))
            ]
        },
    )

    content: str | None = Field(
        None,
        max_length=20_000,
        description="New content, stored as a new memory that replaces "
        "this one (same speaker and role unless given).",
    )
    by_memory_id: str | None = Field(
        None, description="The memory that replaces this one.", validate_default=True
    )
    reason: str = Field(min_length=1, max_length=2_000, json_schema_extra={"pattern": r"\S"})
    speaker: str | None = Field(None, max_length=200)
    role: Role | None = None
    valid_from: datetime | None = Field(
        None,
        description="When the replacement became true (valid time; default: the newer "
        "memory's event time). With content, also the new memory's event time.",
    )

    @field_validator("by_memory_id")
    @classmethod
    def _exactly_one(cls, value: str | None, info: ValidationInfo) -> str | None:
        if "content" in info.data and (value is None) == (info.data["content"] is None):
            raise ValueError("give exactly one of by_memory_id and content")
        return value

    @field_validator("reason")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a reason is required")
        return value


def supersede_memory(
    engine: Engine,
    ingestor: Ingestor,
    space: str,
    memory_id: str,
    request: SupersedeRequest,
    by: str = "api",
) -> SupersedeResult:
    """Supersede an active memory by another memory or by new content, stored as a memory
    through ``ingestor``.

    Errors: 404 unknown space/memory, 422 a memory superseding itself, 409 when the memory is
    not active, the newer one is not active, or the edge would close a cycle.
    """
    spaces.require(engine.store, space)
    old = _brief(engine, space, memory_id, "memory_id")
    if old["status"] != "active":
        detail = ""
        if old["superseded_by"]:
            detail = f" (superseded by {', '.join(old['superseded_by'])})"
        elif old["merged_into"]:
            detail = f" (merged into {', '.join(old['merged_into'])})"
        raise Conflict(
            f"memory {memory_id!r} is {old['status']}{detail}; only active memories can be "
            "superseded",
            field="memory_id",
        )
    created = False
    by_memory_id = request.by_memory_id
    if request.content is not None:
        by_memory_id, created = _store_correction(ingestor, space, memory_id, old, request)
    assert by_memory_id is not None  # the request names it or gives content
    if by_memory_id == memory_id:
        raise InvalidInput("a memory cannot supersede itself", field="by_memory_id")
    new = _brief(engine, space, by_memory_id, "by_memory_id")
    if new["status"] != "active":
        raise Conflict(
            f"memory {by_memory_id!r} is {new['status']}; the newer memory must be active",
            field="by_memory_id",
        )
    sid = f"sup-{uuid.uuid4().hex[:16]}"
    rows = spaces.write_locked(
        engine.store,
        space,
        "consolidate/supersede_memory",
        id=sid,
        older=memory_id,
        newer=by_memory_id,
        newer_statuses=["active"],
        reason=request.reason,
        now=datetime.now(UTC),
        by=by,
        rule="explicit",
        attribute=None,
        old_value=None,
        new_value=None,
        valid_from=as_utc(request.valid_from),
        created_newer=created,
    )
    if not rows:
        raise Conflict(
            f"cannot supersede {memory_id!r} by {by_memory_id!r}: one of them changed meanwhile, "
            "or the newer memory is already older than it in a supersession chain",
            field="by_memory_id",
        )
    return SupersedeResult(
        id=sid,
        older=memory_id,
        newer=by_memory_id,
        created_memory=by_memory_id if created else None,
        reason=request.reason,
        fact_ids=rows[0]["fact_ids"],
        valid_from=rows[0]["valid_from"],
        recorded_at=rows[0]["recorded_at"],
    )


def _store_correction(
    ingestor: Ingestor,
    space: str,
    memory_id: str,
    old: Mapping[str, Any],
    request: SupersedeRequest,
) -> tuple[str, bool]:
    """Store ``request.content`` as a note of the old memory's speaker and role (unless the
    request names others); returns its id and whether it is new."""
    assert request.content is not None
    result = ingestor.add_memories(
        space,
        [
            MemoryIn(
                content=request.content,
                kind="note",
                role=request.role or old["role"] or "note",
                speaker=request.speaker if request.speaker is not None else old["speaker"],
                tags=["correction"],
                time=request.valid_from,
                metadata={"supersedes": memory_id, "reason": request.reason},
            )
        ],
        IngestOptions(force=True),
    )
    item = result.items[0]
    return item.id, item.decision == "stored"


def _brief(engine: Engine, space: str, memory_id: str, fld: str) -> dict[str, Any]:
    rows = engine.store.read("consolidate/memory_brief", space=space, id=memory_id)
    if not rows:
        raise NotFound(f"memory {memory_id!r} does not exist in space {space!r}", field=fld)
    return rows[0]


def get_supersession(engine: Engine, space: str, supersession_id: str) -> SupersessionDetail:
    rows = engine.store.read("consolidate/supersession_get", space=space, id=supersession_id)
    if not rows:
        spaces.require(engine.store, space)
        raise NotFound(
            f"supersession {supersession_id!r} does not exist in space {space!r}", field="id"
        )
    r = rows[0]
    return SupersessionDetail.model_validate(
        {**r["supersession"], "newer": r["newer"], "older": r["older"]}
    )


def revert_supersession(engine: Engine, space: str, supersession_id: str) -> SupersessionReverted:
    """Undo one supersession (see the module docstring)."""
    sup = get_supersession(engine, space, supersession_id)
    rows = spaces.write_locked(
        engine.store, space, "consolidate/supersession_revert", id=supersession_id
    )
    if not rows:
        raise Conflict(f"supersession {supersession_id!r} was reverted meanwhile", field="id")
    r = rows[0]
    return SupersessionReverted(
        id=supersession_id,
        reverted=True,
        older=sup.older,
        newer=sup.newer,
        older_status=r["status"],
        facts_restored=r["facts"],
        archived_created_memory=sup.newer if r["created"] else None,
        valid_from=sup.valid_from,
        recorded_at=sup.recorded_at,
    )


def list_supersessions(
    engine: Engine, space: str, by: str | None = None, skip: int = 0, limit: int = 50
) -> list[Supersession]:
    spaces.require(engine.store, space)
    rows = engine.store.read(
        "consolidate/supersession_list", space=space, by=by, skip=skip, limit=limit
    )
    found = (
        _readable(Supersession, {**r["supersession"], "newer": r["newer"], "older": r["older"]})
        for r in rows
    )
    return [s for s in found if s is not None]


def memory_timeline(engine: Engine, space: str, memory_id: str) -> list[TimelineEntry]:
    """The supersession chain around a memory, oldest first (each with its outgoing edges)."""
    rows = engine.store.read("consolidate/memory_timeline", space=space, id=memory_id)
    if not rows:
        spaces.require(engine.store, space)
        raise NotFound(f"memory {memory_id!r} does not exist in space {space!r}", field="id")
    out = []
    for r in rows:
        edges = [_readable(TimelineEdge, s) for s in r["supersedes"] if s]
        good = [e.model_dump() for e in edges if e is not None]
        entry = _readable(TimelineEntry, {**r["memory"], "supersedes": good})
        if entry is not None:
            out.append(entry)
    return out


def _readable(model: type[R], stored: dict[str, Any]) -> R | None:
    """A stored supersession (or timeline row) as ``model``; ``None`` with a warning for one
    too malformed to read (only a database edited by hand holds one): never a 422 for a read."""
    try:
        return model.model_validate({k: v for k, v in stored.items() if v is not None})
    except ValidationError:
        log.warning("supersession %r is malformed in the store; left out", stored.get("id"))
        return None
