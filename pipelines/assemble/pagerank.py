"""Personalized PageRank over a space's projected entity graph, in GDS (Phase 2's walk).

GDS 2.13 has no per-seed weights: seeds of equal weight form a group
(:func:`~pipelines.assemble.plan.seed_groups`), one ``gds.pageRank.stream`` runs per group, and
the runs are combined linearly (:func:`~pipelines.assemble.ppr.combine_seed_runs`).  The
projection comes from :mod:`pipelines.maintenance` (built when missing or stale, never per
request); a walk that fails because the projection was dropped meanwhile is retried once on a
re-checked projection.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Executor
from dataclasses import dataclass

from neo4j.exceptions import Neo4jError

from pipelines import maintenance
from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.plan import seed_groups
from pipelines.assemble.ppr import combine_seed_runs
from pipelines.engine import Engine
from pipelines.graph import Row

__all__ = ["WalkFacts", "entity_pagerank"]


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

    def stream(name: str, part: list[dict[str, object]]) -> list[Row]:
        return engine.store.read(
            "assemble/ppr_stream",
            space=space,
            graph=name,
            groups=part,
            weight_property="weight",
            damping=config.ppr_damping,
            max_iterations=config.ppr_max_iterations,
            tolerance=config.ppr_tolerance,
            concurrency=config.ppr_concurrency,
            per_run=config.ppr_entities_per_run,
        )

    def walk(name: str) -> list[Row]:
        if len(runs_of) == 1 or not config.ppr_parallel_runs:
            return stream(name, runs_of)
        # One read per seed group; a failed walk raises here, as one statement would.
        rest = [read_ahead.submit(stream, name, [run]) for run in runs_of[1:]]
        rows = stream(name, runs_of[:1])
        for future in rest:
            rows.extend(future.result())
        return rows

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
