"""Phase 2: related memories of other stages.

The entities of the Phase-1 selection, each weighted by how many of those memories mention it,
seed Personalized PageRank over the space's entity co-occurrence graph
(:mod:`pipelines.assemble.pagerank`); memories outside the current stage are scored in Cypher by
the PPR mass of the entities they mention.  That ranking is fused (weighted RRF,
``related_ppr_weight`` / ``related_recall_weight``) with the same memories' rank in whole-space
recall: PPR alone is blind to the query (every memory naming a frequent entity scores alike);
``related_recall_weight=0`` is the pure PPR design.  The PPR weight is scaled by the current
stage's confidence (``related_ppr_by_confidence``): a walk seeded from a stage the query only
weakly points at is as uncertain as the stage, and at confidence 0 it is not run at all.

Personalized PageRank over a space's projected entity graph, in GDS (Phase 2's walk).

GDS 2.13 has no per-seed weights: seeds of equal weight form a group
(:func:`~pipelines.assemble.plan.seed_groups`), one ``gds.pageRank.stream`` runs per group, and
the runs are combined linearly (:func:`~pipelines.assemble.ppr.combine_seed_runs`).  The
projection comes from :mod:`pipelines.maintenance` (built when missing or stale, never per
request); a walk that fails because the projection was dropped meanwhile is retried once on a
re-checked projection.

Personalized PageRank for Phase 2 (cross-stage bridging over the entity graph).

Phase 2 asks which memories *outside* the current stage matter, following
entities rather than embeddings: the entities of the Phase-1 memories seed a
Personalized PageRank walk over the entity co-occurrence graph, and every
other memory is scored by the PPR mass of the entities it mentions.

* The walk runs in Neo4j GDS; a small, exact reference implementation (power
  iteration) is the tests' (``tests/ppr_reference.py``).
* :func:`combine_seed_runs` builds a weighted multi-seed result out of
  single-seed runs.  PPR is linear in its restart vector ``s``: the fixed point
  of ``r = (1-d) s + d P^T r`` is ``r = (1-d)(I - d P^T)^{-1} s``, so the run
  for ``s = sum_k w_k e_k`` is ``sum_k w_k r_k``.  GDS 2.13's
  ``sourceNodes`` restarts uniformly over the sources (no per-seed weights),
  so the service runs one single-source PageRank per seed and combines them
  here.  The identity is exact when mass at dangling nodes is handled
  independently of the seed vector (``dangling="drop"``, or no dangling node
  reachable).  With ``dangling="seeds"`` (mass returned to the seed
  distribution, the design notes' choice) the seed vector enters the operator
  itself; on an undirected graph the only dangling nodes are isolated ones,
  reachable only by restarting at them, so the identity is exact unless a seed
  is isolated.  Scale conventions (GDS does not normalise scores) cancel out
  as long as every run uses the same one.
* :func:`seed_weights_from_memories` weights each entity by the number of
  Phase-1 memories that mention it, normalised to sum 1.

A known failure mode (design notes, bug 1): if memories arrive without their
entity ids, Phase 2 silently contributes nothing.  :func:`memories_without_entities`
lets the caller detect and report that instead.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

from neo4j.exceptions import Neo4jError

from pipelines import maintenance
from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.items import Evidence, Item, Stage, memory_item
from pipelines.assemble.recalls import phase_k
from pipelines.assemble.report import RelatedFacts
from pipelines.assemble.request import Run
from pipelines.engine import Engine
from pipelines.graph import Row, to_native
from pipelines.recall.service import RecallHit
from pipelines.recall.steps.chunks import first_chunks
from pipelines.recall.steps.fuse import FusedItem, weighted_rrf

__all__ = [
    "Related",
    "Scope",
    "WalkFacts",
    "combine_seed_runs",
    "entity_pagerank",
    "memories_without_entities",
    "related_prior",
    "seed_groups",
    "seed_weights_from_memories",
    "top_entities",
    "use_ppr",
]


@dataclass
class Related:
    """Phase 2's ranked candidates and how they were ranked."""

    facts: RelatedFacts
    items: list[Item] = field(default_factory=list)


def use_ppr(run: Run) -> bool:
    return run.config.related_ppr_weight > 0


@dataclass(frozen=True)
class Scope:
    """What Phase 2 starts from: the current stage and its confidence, the space's stages,
    whole-space recall's hits, and the projection check read ahead."""

    current: Stage
    confidence: float
    stages: dict[str, Stage]
    space_hits: Sequence[RecallHit]
    projection: Future[str | None] | None


def _ppr_weight(run: Run, confidence: float) -> float:
    """PageRank's weight in the fusion, scaled by the current stage's confidence."""
    cfg = run.config
    weight = cfg.related_ppr_weight if use_ppr(run) else 0.0
    if cfg.related_ppr_by_confidence and cfg.related_recall_weight > 0:
        weight *= min(1.0, max(0.0, confidence))
    return weight


def related_prior(
    run: Run, scope: Scope, seeds: Sequence[Item], phase1: Sequence[Item], share: int
) -> Related:
    """Other stages' memories: PPR mass from the ``seeds`` (the Phase-1 selection), fused
    with their rank in whole-space recall (``scope.space_hits``)."""
    cfg, current = run.config, scope.current
    ppr_on, ppr_weight = use_ppr(run), _ppr_weight(run, scope.confidence)
    facts = RelatedFacts(
        run=False,
        ppr=ppr_on and ppr_weight > 0,
        ppr_weight=round(ppr_weight, 4),
        seed_memories=len(seeds),
    )
    taken = {i.id for i in phase1}
    k = phase_k(run, share)
    hits: dict[str, tuple[RecallHit, Evidence]] = {}
    ppr_ranking: list[str] = []
    if not ppr_on:
        facts.reason = "PPR weight 0"
    elif ppr_weight <= 0:
        facts.reason = "stage confidence 0: no walk from a stage the query does not name"
    else:
        ppr_ranking = _ppr_ranking(run, scope, seeds, taken, k, hits, facts)
    recall_ranking = [
        h.id
        for h in scope.space_hits
        if h.stage_id != current.id and h.id not in taken and h.stage_id is not None
    ]
    for h in scope.space_hits:
        if h.id in recall_ranking and h.id not in hits:
            hits[h.id] = (h, Evidence())
    weights = {"ppr": ppr_weight, "recall": cfg.related_recall_weight}
    fused = weighted_rrf(
        {"ppr": ppr_ranking, "recall": recall_ranking}, weights, cfg.related_rank_constant
    )
    facts.run = bool(fused)
    facts.ranking = (
        "rrf(ppr, recall)"
        if weights["ppr"] and weights["recall"]
        else ("ppr" if weights["ppr"] else "recall")
    )
    facts.ppr_candidates = len(ppr_ranking)
    facts.recall_candidates = len(recall_ranking)
    return Related(facts, _fused_items(run, scope, fused[: k * cfg.oversample], hits))


def _fused_items(
    run: Run, scope: Scope, fused: Sequence[FusedItem], hits: dict[str, tuple[RecallHit, Evidence]]
) -> list[Item]:
    """The fused candidates as records naming their stage, best first."""
    items = []
    for f in fused:
        hit, detail = hits[f.id]
        stage = scope.stages.get(hit.stage_id) if hit.stage_id else None
        if run.explain:
            detail = Evidence(**detail, ranks=dict(f.ranks), fused=round(f.score, 6))
        item = memory_item(
            hit,
            detail,
            run.est,
            with_stage=True,
            stage_name=stage.label if stage else None,
            chunks_shown=run.config.long_memory_chunks,
        )
        item.score = round(f.score, 6)
        items.append(item)
    return items


def _entity_mass(
    run: Run, scope: Scope, seeds: Sequence[Item], facts: RelatedFacts
) -> dict[str, float]:
    """The top entities by the PPR mass of a walk seeded with the Phase-1 selection's
    entities, weighted by how many of those memories mention each ({}: no walk, ``facts``
    says why)."""
    cfg = run.config
    if not seeds:
        facts.reason = "no Phase-1 memories to seed from"
        return {}
    rows = run.store.read("assemble/memory_entities", space=run.space, ids=[i.id for i in seeds])
    memory_entities = {r["id"]: list(r["keys"]) for r in rows}
    weights = seed_weights_from_memories(memory_entities)
    facts.seed_entities = len(weights)
    facts.memories_without_entities = len(memories_without_entities(memory_entities))
    if not weights:
        facts.reason = "the Phase-1 memories mention no entities"
        return {}
    run.clock.lap("related_seeds")
    try:
        graph = scope.projection.result() if scope.projection is not None else None
        combined, walk = entity_pagerank(
            run.engine, run.read_ahead, run.space, weights, cfg, graph=graph
        )
    except Neo4jError as exc:  # a projection race or GDS refusal: report, do not fail
        facts.reason = f"PageRank failed: {exc.message or exc}"
        return {}
    run.clock.lap("related_pagerank")
    facts.graph, facts.seed_groups, facts.ppr_runs = walk.graph, walk.seed_groups, walk.ppr_runs
    if walk.seed_groups_without_nodes > 0:
        facts.seed_groups_without_nodes = walk.seed_groups_without_nodes
    if walk.projection_rechecked:
        facts.projection_rechecked = True
    if walk.graph is None:
        facts.reason = "the space has no entity graph to walk"
        return {}
    mass = top_entities(combined, cfg.ppr_top_entities)
    facts.entities = len(mass)
    if run.explain:
        facts.top_entities = {key: round(v, 6) for key, v in list(mass.items())[:20]}
    if not mass:
        facts.reason = "PageRank gave no entity any mass"
    return mass


def _ppr_ranking(
    run: Run,
    scope: Scope,
    seeds: Sequence[Item],
    taken: set[str],
    k: int,
    hits: dict[str, tuple[RecallHit, Evidence]],
    facts: RelatedFacts,
) -> list[str]:
    """Memories of other stages ranked by the PPR mass of their entities
    (:func:`_entity_mass`); their hits go into ``hits``, what happened into ``facts``."""
    cfg = run.config
    mass = _entity_mass(run, scope, seeds, facts)
    if not mass:
        return []
    rows = run.store.read(
        "assemble/ppr_memories_as_of" if run.time_travel else "assemble/ppr_memories",
        space=run.space,
        entities=[{"key": key, "mass": m} for key, m in mass.items()],
        exclude_stage=scope.current.id,
        exclude_ids=sorted(taken),
        include_superseded=run.request.include_superseded,
        limit=k * cfg.oversample,
        per_entity=cfg.ppr_memories_per_entity,
        as_of=run.as_of,  # as_of and known_at: unused by assemble/ppr_memories
        known_at=run.known_at,
    )
    ranking = []
    for r in rows:
        hit = _ppr_hit(r)
        detail = Evidence(ppr_mass=round(float(r["score"]), 6))
        if run.explain:
            detail["via"] = list(r["via"])[:10]
        hits[hit.id] = (hit, detail)
        ranking.append(hit.id)
    _first_chunks(run, [hits[i][0] for i in ranking])
    return ranking


def _ppr_hit(r: dict[str, Any]) -> RecallHit:
    return RecallHit(
        id=r["id"],
        content=r["text"] or "",
        score=float(r["score"]),
        session_id=r["session_id"],
        stage_id=r["stage_id"],
        time=to_native(r["event_time"]),
        speaker=r["speaker"],
        role=r["role"],
        chunk_count=int(r["chunk_count"]),
    )


def _first_chunks(run: Run, found: Sequence[RecallHit]) -> None:
    """A long memory the graph walk found shows its first chunk (no query matched it)."""
    long = [h.id for h in found if h.chunk_count and not h.chunks]
    if long:
        spans = first_chunks(run.store, run.space, long)
        for h in found:
            h.chunks = spans.get(h.id, h.chunks)


@dataclass
class WalkFacts:
    """What a walk did: the projection walked (``None``: the space has no entities), the
    seed groups, the runs that returned mass, and whether the projection was re-checked."""

    graph: str | None
    seed_groups: int
    ppr_runs: int = 0
    projection_rechecked: bool = False

    @property
    def seed_groups_without_nodes(self) -> int:
        return self.seed_groups - self.ppr_runs if self.graph is not None else 0


def _walk(
    engine: Engine,
    read_ahead: Executor,
    space: str,
    graph: str,
    runs_of: list[dict[str, object]],
    config: AssemblyConfig,
) -> list[Row]:
    """The PageRank runs of every seed group over ``graph``: one statement, or (with
    ``ppr_parallel_runs``) one read per group, the others on ``read_ahead``; a failed walk
    raises here, as one statement would."""

    def stream(part: list[dict[str, object]]) -> list[Row]:
        return engine.store.read(
            "assemble/ppr_stream",
            space=space,
            graph=graph,
            groups=part,
            weight_property="weight",
            damping=config.ppr_damping,
            max_iterations=config.ppr_max_iterations,
            tolerance=config.ppr_tolerance,
            concurrency=config.ppr_concurrency,
            per_run=config.ppr_entities_per_run,
        )

    if len(runs_of) == 1 or not config.ppr_parallel_runs:
        return stream(runs_of)
    rest = [read_ahead.submit(stream, [run]) for run in runs_of[1:]]
    rows = stream(runs_of[:1])
    for future in rest:
        rows.extend(future.result())
    return rows


def entity_pagerank(
    engine: Engine,
    read_ahead: Executor,
    space: str,
    seed_weights: Mapping[str, float],
    config: AssemblyConfig,
    graph: str | None = None,
) -> tuple[dict[str, float], WalkFacts]:
    """Personalized PageRank with weighted seeds (entity key -> weight).

    Returns the mass by entity key, summing to the share of the walk that landed on the
    entities streamed back (each run keeps its top ``ppr_entities_per_run``; all of it when
    that covers the graph), and the :class:`WalkFacts`.  ``graph``: the projection name from
    a just-made :func:`~pipelines.maintenance.ensure_entity_projection` (else it is made
    here).  The runs of several seed groups go to ``read_ahead`` beside the first
    (``ppr_parallel_runs``); the caller must not itself be a ``read_ahead`` task.
    """
    groups = seed_groups(seed_weights)
    facts = WalkFacts(graph=None, seed_groups=len(groups))
    if not groups:
        return {}, facts
    if graph is None:
        graph = maintenance.ensure_entity_projection(engine, space)
    facts.graph = graph
    if graph is None:
        return {}, facts
    runs_of = [{"id": n, "keys": keys} for n, (_, keys) in enumerate(groups)]

    def walk(name: str) -> list[Row]:
        return _walk(engine, read_ahead, space, name, runs_of, config)

    try:
        rows = walk(graph)
    except Neo4jError:
        maintenance.forget_entity_projection(engine, space)
        graph = maintenance.ensure_entity_projection(engine, space)
        facts.graph = graph
        facts.projection_rechecked = True
        if graph is None:
            return {}, facts
        rows = walk(graph)
    runs: dict[int, dict[str, float]] = {}
    for r in rows:
        runs.setdefault(int(r["run"]), {})[r["key"]] = float(r["score"])
    facts.ppr_runs = len(runs)
    # GDS scores a multi-source run as the sum of its single-source runs (each summing to
    # 1), so the weighted combination is sum_g w_g * run_g; normalise to one unit of mass.
    weights = {n: w * len(groups[n][1]) for n, (w, _) in enumerate(groups) if n in runs}
    scaled = {n: {k: v / len(groups[n][1]) for k, v in run.items()} for n, run in runs.items()}
    return combine_seed_runs(scaled, weights), facts


N = TypeVar("N", bound=Hashable)


M = TypeVar("M", bound=Hashable)


def combine_seed_runs(
    single_seed_scores: Mapping[N, Mapping[M, float]],
    seed_weights: Mapping[N, float],
) -> dict[M, float]:
    """Linear combination ``sum_k w_k * run_k`` with weights normalised to sum 1.

    ``single_seed_scores[seed]`` is the PPR run restarting only at ``seed``.
    Seeds with zero weight are ignored; a seed with positive weight but no run
    raises ``ValueError`` (silently skipping it would bias Phase 2).  Returns
    ``{}`` when no seed has positive weight.
    """
    if any(w < 0 for w in seed_weights.values()):
        raise ValueError("seed weights must be non-negative")
    active = {seed: w for seed, w in seed_weights.items() if w > 0}
    missing = [seed for seed in active if seed not in single_seed_scores]
    if missing:
        raise ValueError(f"no single-seed run for seeds {missing!r}")
    total = sum(active.values())
    combined: dict[M, float] = {}
    for seed, weight in active.items():
        share = weight / total
        for node, score in single_seed_scores[seed].items():
            combined[node] = combined.get(node, 0.0) + share * score
    return combined


def seed_weights_from_memories(memory_entities: Mapping[M, Iterable[N]]) -> dict[N, float]:
    """Seed weight per entity: Phase-1 memories mentioning it, normalised to sum 1.

    An entity listed twice for one memory counts once.  Entities are returned
    in first-seen order.  ``{}`` when no memory carries an entity (check
    :func:`memories_without_entities` -- it usually means missing annotations).
    """
    counts: dict[N, int] = {}
    for entities in memory_entities.values():
        for entity in dict.fromkeys(entities):
            counts[entity] = counts.get(entity, 0) + 1
    total = sum(counts.values())
    return {entity: c / total for entity, c in counts.items()} if total else {}


def memories_without_entities(memory_entities: Mapping[M, Iterable[N]]) -> list[M]:
    """Memories whose entity list is empty (Phase 2 cannot start from them)."""
    return [memory for memory, entities in memory_entities.items() if not list(entities)]


def top_entities(entity_mass: Mapping[N, float], k: int) -> dict[N, float]:
    """The ``k`` entities with the most mass (ties: first seen first), mass > 0 only."""
    ranked = sorted(((e, m) for e, m in entity_mass.items() if m > 0), key=lambda item: -item[1])
    return dict(ranked[: max(k, 0)])


def seed_groups(weights: Mapping[str, float], digits: int = 9) -> list[tuple[float, list[str]]]:
    """Seeds grouped by equal weight (rounded to ``digits``), heaviest group first; seeds keep
    their input order inside a group.  Zero and negative weights are left out.

    One multi-source PageRank run per group then replaces one run per seed: GDS restarts a run
    at every source with the same mass, and the result is the sum of the single-source runs.
    """
    groups: dict[float, list[str]] = {}
    for seed, weight in weights.items():
        if weight > 0:
            groups.setdefault(round(weight, digits), []).append(seed)
    return sorted(groups.items(), key=lambda item: -item[0])
