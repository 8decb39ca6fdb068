"""Personalized PageRank for Phase 2 (cross-stage bridging over the entity graph).

Phase 2 asks which memories *outside* the current stage matter, following
entities rather than embeddings: the entities of the Phase-1 memories seed a
Personalized PageRank walk over the entity co-occurrence graph, and every
other memory is scored by the PPR mass of the entities it mentions.

* :func:`personalized_pagerank` is a small, exact reference implementation
  (power iteration, undirected weighted graph) for tests and hand-checked
  examples; production runs the walk in Neo4j GDS.
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
* :func:`score_memories` sums, per memory, the mass of its distinct entities,
  excluding current-stage memories and memories with no mass.

A known failure mode (design notes, bug 1): if memories arrive without their
entity ids, Phase 2 silently contributes nothing.  :func:`memories_without_entities`
lets the caller detect and report that instead.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from typing import Literal, TypeVar

import numpy as np

__all__ = [
    "combine_seed_runs",
    "memories_without_entities",
    "personalized_pagerank",
    "score_memories",
    "seed_weights_from_memories",
    "top_entities",
]

N = TypeVar("N", bound=Hashable)
M = TypeVar("M", bound=Hashable)

DanglingPolicy = Literal["seeds", "drop"]


def personalized_pagerank(
    nodes: Sequence[N],
    weighted_edges: Iterable[tuple[N, N, float]],
    seeds: Mapping[N, float],
    damping: float = 0.85,
    max_iterations: int = 100,
    tolerance: float = 1e-6,
    dangling: DanglingPolicy = "seeds",
) -> dict[N, float]:
    """Personalized PageRank by power iteration on an undirected weighted graph.

    ``r(t+1) = (1 - damping) * s + damping * P^T r(t)`` where ``s`` is the
    seed vector normalised to sum 1 and ``P[u, v] = w(u, v) / sum_x w(u, x)``.
    Each undirected edge is walkable both ways; parallel edges add up; a
    self-loop ``(u, u, w)`` adds ``w`` once to ``u``'s own row; zero-weight
    edges are ignored.  A node with no positive edge is *dangling*: with
    ``dangling="seeds"`` its mass returns to the seed distribution (total mass
    stays 1); with ``"drop"`` it leaks (linear in ``s``; see the module notes).
    Iteration starts at ``s`` and stops when the L1 change is below
    ``tolerance`` or after ``max_iterations``.

    Returns a score for every node.  Raises ``ValueError`` for unknown or
    duplicate nodes, negative weights, seeds outside ``nodes``, negative seed
    weights or an all-zero seed vector.
    """
    if not 0 < damping < 1:
        raise ValueError("damping must be in (0, 1)")
    index = {node: i for i, node in enumerate(nodes)}
    if len(index) != len(nodes):
        raise ValueError("nodes must be unique")
    n = len(nodes)
    seed = np.zeros(n)
    for node, weight in seeds.items():
        if node not in index:
            raise ValueError(f"seed {node!r} is not a node of the graph")
        if weight < 0:
            raise ValueError("seed weights must be non-negative")
        seed[index[node]] += weight
    if seed.sum() <= 0:
        raise ValueError("at least one seed must have a positive weight")
    seed /= seed.sum()

    src: list[int] = []
    dst: list[int] = []
    wts: list[float] = []
    for u, v, w in weighted_edges:
        if u not in index or v not in index:
            raise ValueError(f"edge ({u!r}, {v!r}) has an endpoint outside nodes")
        if w < 0:
            raise ValueError("edge weights must be non-negative")
        if w == 0:
            continue
        src.append(index[u])
        dst.append(index[v])
        wts.append(float(w))
        if u != v:
            src.append(index[v])
            dst.append(index[u])
            wts.append(float(w))
    src_a, dst_a, w_a = np.array(src, dtype=int), np.array(dst, dtype=int), np.array(wts)
    strength = np.bincount(src_a, weights=w_a, minlength=n)
    is_dangling = strength <= 0
    transition = w_a / strength[src_a] if len(w_a) else w_a

    rank = seed.copy()
    for _ in range(max_iterations):
        walked = np.bincount(dst_a, weights=rank[src_a] * transition, minlength=n)
        new = (1 - damping) * seed + damping * walked
        if dangling == "seeds":
            new += damping * rank[is_dangling].sum() * seed
        change = float(np.abs(new - rank).sum())
        rank = new
        if change < tolerance:
            break
    return {node: float(rank[i]) for node, i in index.items()}


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


def score_memories(
    entity_mass: Mapping[N, float],
    memory_entities: Mapping[M, Iterable[N]],
    exclude: Collection[M] = frozenset(),
    limit: int | None = None,
) -> list[tuple[M, float]]:
    """Rank memories by the PPR mass of their distinct entities (HippoRAG-style).

    ``score(m) = sum(entity_mass[e] for e in set(entities(m)))``.  Memories in
    ``exclude`` (the current stage's, already covered by Phase 1) and memories
    with zero score are left out.  Sorted by descending score, ties in input
    order; at most ``limit`` results.
    """
    scored: list[tuple[M, float]] = []
    for memory, entities in memory_entities.items():
        if memory in exclude:
            continue
        score = sum(entity_mass.get(e, 0.0) for e in dict.fromkeys(entities))
        if score > 0:
            scored.append((memory, score))
    scored.sort(key=lambda item: -item[1])
    return scored if limit is None else scored[: max(limit, 0)]
