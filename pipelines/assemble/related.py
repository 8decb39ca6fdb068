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
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from neo4j.exceptions import Neo4jError

from pipelines.assemble.items import Evidence, Item, Stage, memory_item
from pipelines.assemble.pagerank import entity_pagerank
from pipelines.assemble.ppr import memories_without_entities, seed_weights_from_memories
from pipelines.assemble.ppr import top_entities as top_entity_mass
from pipelines.assemble.recalls import phase_k
from pipelines.assemble.report import RelatedFacts
from pipelines.assemble.run import Run
from pipelines.graph import to_native
from pipelines.recall.chunks import first_chunks
from pipelines.recall.fusion import weighted_rrf
from pipelines.recall.service import RecallHit

__all__ = ["Related", "related_prior", "use_ppr"]


@dataclass
class Related:
    """Phase 2's ranked candidates and how they were ranked."""

    facts: RelatedFacts
    items: list[Item] = field(default_factory=list)


def use_ppr(run: Run) -> bool:
    return run.config.related_ppr_weight > 0


def related_prior(
    run: Run,
    current: Stage,
    seeds: Sequence[Item],
    phase1: Sequence[Item],
    share: int,
    stages: dict[str, Stage],
    space_hits: Sequence[RecallHit],
    projection: Future[str | None] | None,
    confidence: float,
) -> Related:
    """Other stages' memories: PPR mass from the ``seeds`` (the Phase-1 selection), fused
    with their rank in whole-space recall (``space_hits``)."""
    cfg = run.config
    ppr_on = use_ppr(run)
    ppr_weight = cfg.related_ppr_weight if ppr_on else 0.0
    if cfg.related_ppr_by_confidence and cfg.related_recall_weight > 0:
        ppr_weight *= min(1.0, max(0.0, confidence))
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
        ppr_ranking = _ppr_ranking(run, current, seeds, taken, k, hits, facts, projection)
    recall_ranking = [
        h.id
        for h in space_hits
        if h.stage_id != current.id and h.id not in taken and h.stage_id is not None
    ]
    for h in space_hits:
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
    out = Related(facts)
    for f in fused[: k * cfg.oversample]:
        hit, detail = hits[f.id]
        stage = stages.get(hit.stage_id) if hit.stage_id else None
        if run.explain:
            detail = Evidence(**detail, ranks=dict(f.ranks), fused=round(f.score, 6))
        item = memory_item(
            hit,
            detail,
            run.est,
            with_stage=True,
            stage_name=stage.label if stage else None,
            chunks_shown=cfg.long_memory_chunks,
        )
        item.score = round(f.score, 6)
        out.items.append(item)
    return out


def _ppr_ranking(
    run: Run,
    current: Stage,
    seeds: Sequence[Item],
    taken: set[str],
    k: int,
    hits: dict[str, tuple[RecallHit, Evidence]],
    facts: RelatedFacts,
    projection: Future[str | None] | None,
) -> list[str]:
    """Memories of other stages ranked by the PPR mass of their entities (seeded with the
    Phase-1 selection's entities, weighted by how many of those memories mention each); their
    hits go into ``hits``, what happened into ``facts``."""
    cfg = run.config
    if not seeds:
        facts.reason = "no Phase-1 memories to seed from"
        return []
    rows = run.store.read("assemble/memory_entities", space=run.space, ids=[i.id for i in seeds])
    memory_entities = {r["id"]: list(r["keys"]) for r in rows}
    weights = seed_weights_from_memories(memory_entities)
    facts.seed_entities = len(weights)
    facts.memories_without_entities = len(memories_without_entities(memory_entities))
    if not weights:
        facts.reason = "the Phase-1 memories mention no entities"
        return []
    run.clock.lap("related_seeds")
    try:
        graph = projection.result() if projection is not None else None
        combined, walk = entity_pagerank(
            run.engine, run.read_ahead, run.space, weights, cfg, graph=graph
        )
    except Neo4jError as exc:  # a projection race or GDS refusal: report, do not fail
        facts.reason = f"PageRank failed: {exc.message or exc}"
        return []
    run.clock.lap("related_pagerank")
    facts.graph, facts.seed_groups, facts.ppr_runs = walk.graph, walk.seed_groups, walk.ppr_runs
    if walk.seed_groups_without_nodes > 0:
        facts.seed_groups_without_nodes = walk.seed_groups_without_nodes
    if walk.projection_rechecked:
        facts.projection_rechecked = True
    if walk.graph is None:
        facts.reason = "the space has no entity graph to walk"
        return []
    mass = top_entity_mass(combined, cfg.ppr_top_entities)
    facts.entities = len(mass)
    if run.explain:
        facts.top_entities = {key: round(v, 6) for key, v in list(mass.items())[:20]}
    if not mass:
        facts.reason = "PageRank gave no entity any mass"
        return []
    rows = run.store.read(
        "assemble/ppr_memories_as_of" if run.time_travel else "assemble/ppr_memories",
        space=run.space,
        entities=[{"key": key, "mass": m} for key, m in mass.items()],
        exclude_stage=current.id,
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
