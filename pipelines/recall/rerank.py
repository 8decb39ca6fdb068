"""A reranker that needs no new weights: score a turn together with its neighbours.

A conversational turn is often only intelligible with the turns around it ("Yes, last
week!" answers the question before it). The context reranker scores each candidate by its
own cosine similarity to the query plus a share of the best similarity among its
conversation neighbours (up to ``window`` turns away along NEXT edges, nearer ones counting
more). The similarities come from the embeddings already stored in the graph (computed in
Cypher): no model call, no new weights.

Pure: the service fetches the similarities and blends these scores with the fused ones
(:func:`pipelines.recall.fusion.blend_rerank`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pipelines.recall.config import DEFAULT_RECALL_CONFIG


def context_scores(
    own: Mapping[str, float],
    neighbours: Mapping[str, Sequence[tuple[int, float]]],
    weight: float = DEFAULT_RECALL_CONFIG.rerank.context_weight,
    window: int = DEFAULT_RECALL_CONFIG.rerank.context_window,
) -> dict[str, float]:
    """``own[id] + weight · max(0, max_n sim(n) / distance(n))`` for every id in ``own``.

    ``own`` maps ids to their cosine similarity with the query; ``neighbours[id]`` lists
    ``(distance, similarity)`` pairs of its neighbours (distance ≥ 1 turns). Neighbours
    farther than ``window`` are ignored; dividing by the distance makes adjacent turns count
    most; negative similarities add nothing.

    Raises:
        ValueError: if ``weight`` is negative or ``window`` < 0.
    """
    if weight < 0.0:
        raise ValueError("weight must be >= 0")
    if window < 0:
        raise ValueError("window must be >= 0")
    out: dict[str, float] = {}
    for item_id, sim in own.items():
        best = 0.0
        for distance, n_sim in neighbours.get(item_id, ()):
            if 1 <= distance <= window:
                best = max(best, n_sim / distance)
        out[item_id] = sim + weight * best
    return out
