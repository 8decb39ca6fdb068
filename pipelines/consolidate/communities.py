"""Community stages: topical stages from GDS Leiden, for spaces without explicit labels.

1. **Units**: a session moves between stages as a whole (every memory in it, whatever its
   status); a memory without a session is its own unit.
2. **Project** the space's memory-entity graph aggregated to units (GDS Cypher projection,
   undirected): unit -> entity, weighted by how many of the unit's active memories mention the
   entity. Hub entities mentioned by more than ``max_entity_share`` of the memories are left
   out once the space is big enough (a user's own name would glue every topic together).
   Aggregating keeps the graph small: Leiden assigns units directly.
3. **Leiden** with a fixed ``randomSeed`` and ``concurrency`` 1: the same graph always gives
   the same partition.
4. **Small communities** (fewer than ``min_stage_memories`` active memories) join the community
   of the unit just before them in time (just after, for the very first).
5. **Stable ids**: each community is matched to an existing community stage by the Jaccard
   overlap of their units (greedy, best first, at least ``stable_jaccard``) and keeps its id;
   an unmatched one gets ``community:<sha1 of its smallest unit id>`` - derived from its
   members, so a run that crashed half way and is re-run reaches the same ids.
6. **Write**, in batches that each leave the graph consistent: stage nodes (kind
   ``community``), then ``IN_STAGE`` edges and ``stage_id`` of sessions and memories. Derived
   stages left empty are deleted with their schema once the stages that received their units
   have recorded their ids (an id ingest returned stays resolvable:
   :mod:`~pipelines.consolidate.stage_redirects`), extents recomputed, the ``NEXT_STAGE``
   chain rebuilt. Stages are named after their most distinctive entities (tf-idf against the
   space, no two stages alike: :mod:`~pipelines.consolidate.stage_names`).

The session -> stage decision is expressed as a :class:`CommunityStageDetector`, the
``StageDetector`` of :mod:`pipelines.ingest.stages` built from a precomputed map.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pipelines import spaces
from pipelines.consolidate import graph_budget, stage_redirects
from pipelines.consolidate.config import CommunityConfig
from pipelines.consolidate.context import JobContext
from pipelines.consolidate.stage_names import Term, stage_names
from pipelines.graph import Tx
from pipelines.ingest.stages import (
    SessionSpan,
    StageAssignment,
    StageDetector,
    StageState,
    TimeGapStageDetector,
    assign_stages,
)

GRAPH_PREFIX = "mnemograph/communities/"
NAME_TERMS = 200  # entities read per stage to name it (the most mentioned)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class CommunityStageDetector:
    """A :class:`~pipelines.ingest.stages.StageDetector` from a precomputed
    ``session_id -> stage key`` map (keys like ``community:<id>``); sessions missing from the
    map go to ``fallback`` (time gaps by default)."""

    assignment: Mapping[str, str]
    fallback: StageDetector = field(default_factory=TimeGapStageDetector)
    kind: str = field(default="community", init=False)

    def assign(
        self, sessions: Sequence[SessionSpan], last_stage: StageState | None
    ) -> list[StageAssignment]:
        known = [s for s in sessions if s.session_id in self.assignment]
        unknown = [s for s in sessions if s.session_id not in self.assignment]
        by_id = {
            s.session_id: StageAssignment(
                s.session_id,
                self.assignment[s.session_id],
                self.kind,
                last_stage is not None and last_stage.key == self.assignment[s.session_id],
                "community detected by Leiden",
            )
            for s in known
        }
        fits = last_stage is not None and last_stage.kind == self.fallback.kind
        last = last_stage if fits else None
        by_id.update((a.session_id, a) for a in self.fallback.assign(unknown, last))
        return [by_id[s.session_id] for s in sessions]


@dataclass(frozen=True, slots=True)
class Unit:
    """A session (or a memory without one): what moves between stages as a whole."""

    id: str  # 'session:<id>' or 'memory:<id>'
    kind: str  # 'session' | 'memory'
    ref: str  # the session's or the memory's own id
    size: int  # active memories
    start: datetime
    end: datetime
    current_stage: str | None
    consistent: bool = True
    """False when some of a session's memories are not in the session's stage."""


@dataclass(frozen=True, slots=True)
class StagePlan:
    id: str
    name: str
    units: tuple[str, ...]
    size: int  # active memories
    start: datetime
    end: datetime
    reused: bool


def group_units(
    units: Sequence[Unit], communities: Mapping[str, int], min_size: int
) -> list[list[Unit]]:
    """Units grouped by community, small groups folded into their predecessor in time."""
    ordered = sorted((u for u in units if u.id in communities), key=lambda u: (u.start, u.id))
    by_comm: dict[int, list[Unit]] = defaultdict(list)
    for u in ordered:
        by_comm[communities[u.id]].append(u)
    if not by_comm:
        return []
    size = {c: sum(u.size for u in us) for c, us in by_comm.items()}
    big = {c for c, n in size.items() if n >= min_size}
    if not big:
        return [ordered]
    target: dict[int, int] = {c: c for c in big}
    position = {u.id: i for i, u in enumerate(ordered)}
    for c in sorted(set(by_comm) - big, key=lambda c: (by_comm[c][0].start, by_comm[c][0].id)):
        idx = position[by_comm[c][0].id]
        before = [communities[u.id] for u in reversed(ordered[:idx]) if communities[u.id] in big]
        after = [communities[u.id] for u in ordered[idx + 1 :] if communities[u.id] in big]
        target[c] = before[0] if before else after[0]
    groups: dict[int, list[Unit]] = defaultdict(list)
    for u in ordered:
        groups[target[communities[u.id]]].append(u)
    return [sorted(g, key=lambda u: (u.start, u.id)) for g in groups.values()]


def community_stage_id(members: Sequence[str] | frozenset[str]) -> str:
    return "community:" + hashlib.sha1(min(members).encode("utf-8")).hexdigest()[:10]


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def match_stage_ids(
    groups: Sequence[frozenset[str]],
    existing: Mapping[str, frozenset[str]],
    min_jaccard: float,
    taken: frozenset[str] = frozenset(),
) -> list[tuple[str, bool]]:
    """A stage id per group: the best-overlapping existing community stage (greedy, Jaccard
    >= ``min_jaccard``), else an id derived from the members. Returns ``(id, reused)``."""
    pairs = sorted(
        (-_jaccard(g, members), sid, min(g) if g else "", gi)
        for gi, g in enumerate(groups)
        for sid, members in existing.items()
        if g & members
    )
    out: dict[int, tuple[str, bool]] = {}
    used: set[str] = set()
    for neg, sid, _, gi in pairs:
        if -neg < min_jaccard or gi in out or sid in used:
            continue
        out[gi] = (sid, True)
        used.add(sid)
    for gi, g in enumerate(groups):
        if gi in out or not g:
            continue
        base = community_stage_id(g)
        sid, n = base, 1
        while sid in used or sid in taken:
            n += 1
            sid = f"{base}-{n}"
        out[gi] = (sid, sid in existing)
        used.add(sid)
    return [out[gi] for gi in range(len(groups)) if gi in out]


def plan_stages(
    units: Sequence[Unit],
    communities: Mapping[str, int],
    existing: Mapping[str, frozenset[str]],
    config: CommunityConfig,
    taken: frozenset[str] = frozenset(),
) -> list[StagePlan]:
    """The community stages of the space (pure): groups of units, stable ids, extents.

    ``communities`` maps unit ids to Leiden communities; ``existing`` maps current community
    stage ids to the unit ids they hold."""
    groups = group_units(units, communities, config.min_stage_memories)
    member_sets = [frozenset(u.id for u in g) for g in groups]
    ids = match_stage_ids(member_sets, existing, config.stable_jaccard, taken)
    return [
        StagePlan(
            id=sid,
            name="topic " + sid.split(":", 1)[-1],
            units=tuple(u.id for u in g),
            size=sum(u.size for u in g),
            start=min(u.start for u in g),
            end=max(u.end for u in g),
            reused=reused,
        )
        for g, (sid, reused) in zip(groups, ids, strict=True)
    ]


# --------------------------------------------------------------------------- the job


def _from_ms(ms: int | None) -> datetime:
    return datetime.fromtimestamp(ms / 1000.0, UTC) if ms is not None else _EPOCH


def _units(ctx: JobContext) -> list[Unit]:
    return [
        Unit(
            id=r["unit"],
            kind=r["kind"],
            ref=r["ref"],
            size=r["active"],
            start=_from_ms(r["start"]),
            end=_from_ms(r["end"]),
            current_stage=r["stage"],
            consistent=r["astray"] == 0,
        )
        for r in ctx.store.read("consolidate/community_units", space=ctx.space)
    ]


def _leiden(ctx: JobContext, active: int) -> dict[str, int]:
    cfg = ctx.config.communities
    graph = f"{GRAPH_PREFIX}{ctx.space}/{uuid.uuid4().hex[:12]}"
    max_degree = (
        max(1, int(cfg.max_entity_share * active)) if active >= cfg.hub_min_memories else 2**31 - 1
    )
    graph_budget.require_room(
        ctx.store,
        "the community graph",
        "consolidate/community_graph_size",
        ctx.space,
        ctx.config.upkeep,
    )
    try:
        projected = ctx.store.write(
            "consolidate/community_project",
            space=ctx.space,
            graph=graph,
            max_degree=max_degree,
        )
        if not projected or projected[0]["graph"] is None:
            return {}
        ctx.counts["graph_nodes"] = projected[0]["nodes"]
        ctx.counts["graph_relationships"] = projected[0]["relationships"]
        # The algorithm runs through the official graphdatascience client.
        gds = ctx.engine.gds
        frame = gds.leiden.stream(
            gds.graph.get(graph),
            relationship_weight_property="weight",
            random_seed=cfg.random_seed,
            concurrency=cfg.concurrency,
            gamma=cfg.gamma,
            theta=cfg.theta,
            tolerance=cfg.tolerance,
            max_levels=cfg.max_levels,
            log_progress=False,
        )
        rows = ctx.store.read(
            "consolidate/community_units_of_nodes",
            rows=[
                {"node": int(n), "community": int(c)}
                for n, c in zip(frame["nodeId"], frame["communityId"], strict=True)
            ],
        )
        return {r["unit"]: int(r["community"]) for r in rows}
    finally:
        ctx.store.write("consolidate/graph_drop", graph=graph)


def run(ctx: JobContext) -> None:
    cfg = ctx.config.communities
    if not cfg.enabled:
        ctx.counts["skipped_disabled"] = 1
        return
    status = ctx.store.read("consolidate/community_status", space=ctx.space)[0]
    if status["labelled"]:
        ctx.counts["skipped_explicit_labels"] = 1
        return
    if status["active"] < cfg.min_active_memories:
        ctx.counts["skipped_too_small"] = 1
        return
    communities = _leiden(ctx, status["active"])
    ctx.counts["communities"] = len(set(communities.values()))
    ctx.checkpoint("communities:leiden")
    units = _units(ctx)
    stages = {r["id"]: r for r in ctx.store.read("consolidate/community_stages", space=ctx.space)}
    held: dict[str, set[str]] = defaultdict(set)
    for u in units:
        if u.current_stage and u.size:
            held[u.current_stage].add(u.id)
    existing = {
        sid: frozenset(held.get(sid, ())) for sid, st in stages.items() if st["kind"] == "community"
    }
    taken = frozenset(sid for sid, st in stages.items() if st["kind"] != "community")
    plans = plan_stages(units, communities, existing, cfg, taken)
    target = {u: p.id for p in plans for u in p.units}
    # the session -> stage decision, through the StageDetector protocol
    detector = CommunityStageDetector({u.id: target[u.id] for u in units if u.id in target})
    spans = [SessionSpan(u.id, u.start, u.end) for u in units if u.id in target]
    decided = {a.session_id: a.stage_key for a in assign_stages(spans, None, detector)}
    moves = [
        u
        for u in units
        if u.id in decided and (u.current_stage != decided[u.id] or not u.consistent)
    ]
    ctx.counts["stages"] = len(plans)
    ctx.counts["stages_reused"] = sum(p.reused for p in plans)
    ctx.counts["stages_new"] = sum(not p.reused for p in plans)
    ctx.counts["units_to_move" if ctx.dry_run else "units_moved"] = len(moves)
    for p in plans:
        if not p.reused:
            ctx.note({"stage": p.id, "units": len(p.units), "memories": p.size})
    if ctx.dry_run:
        return
    rows = [{"id": p.id, "name": p.name, "start": p.start, "end": p.end, "size": p.size}
            for p in plans]  # fmt: skip
    spaces.write_locked(ctx.store, ctx.space, "consolidate/community_upsert_stages", stages=rows)
    for kind in ("session", "memory"):
        unit_moves = [{"unit": u.ref, "stage": decided[u.id]} for u in moves if u.kind == kind]
        for start in range(0, len(unit_moves), cfg.write_batch):
            chunk = unit_moves[start : start + cfg.write_batch]
            spaces.write_locked(
                ctx.store, ctx.space, f"consolidate/community_move_{kind}s", moves=chunk
            )
            ctx.checkpoint(f"communities:{kind}s:{start}")
    name_stages(ctx, plans, status["active"])
    finish_stages(ctx)


def name_stages(ctx: JobContext, plans: Sequence[StagePlan], active: int) -> None:
    """Name the stages after their distinctive entities (:mod:`~pipelines.consolidate.
    stage_names`)."""
    cfg = ctx.config.communities
    rows = ctx.store.read(
        "consolidate/community_name_terms",
        space=ctx.space,
        ids=[p.id for p in plans],
        limit=NAME_TERMS,
    )
    terms = {
        r["id"]: [Term(t["key"], t["name"], int(t["tf"]), int(t["df"])) for t in r["terms"]]
        for r in rows
    }
    names = stage_names(terms, {p.id: p.size for p in plans}, active, cfg.name_entities)
    spaces.write_locked(
        ctx.store,
        ctx.space,
        "consolidate/community_set_names",
        names=[{"id": sid, "name": name} for sid, name in sorted(names.items())],
    )


def finish_stages(ctx: JobContext) -> None:
    """Delete emptied derived stages (with their schema) after recording where their units
    went (:mod:`~pipelines.consolidate.stage_redirects`), fix extents, rebuild the chain."""

    def retire(tx: Tx) -> dict[str, int]:
        spaces.lock_for_write(tx, ctx.space)
        return stage_redirects.retire_emptied(tx, ctx.space)

    ctx.counts.update(ctx.store.write_tx(retire))
    spaces.write_locked(ctx.store, ctx.space, "consolidate/stages_extents")
    spaces.write_locked(ctx.store, ctx.space, "ingest/relink_stages")
    # memories moved between stages: their centroids are recomputed (a space has few stages)
    ids = [r["id"] for r in ctx.store.read("consolidate/stage_ids", space=ctx.space)]
    for start in range(0, len(ids), 50):
        batch = ids[start : start + 50]
        spaces.write_locked(ctx.store, ctx.space, "consolidate/stage_centroids", ids=batch)
