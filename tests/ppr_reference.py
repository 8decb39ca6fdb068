"""A small, exact Personalized PageRank (power iteration on an undirected weighted graph) and
the memory scoring of Phase 2, as references for the tests: production walks in Neo4j GDS
(:mod:`pipelines.assemble.related`) and scores memories in Cypher."""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from typing import Literal, TypeVar

import numpy as np

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
