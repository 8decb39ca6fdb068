"""Vectors kept on entities and stages, maintained as running means at ingest (pure).

* An **entity**'s vector is the mean embedding of the memories that mention it: the entity
  in the context of its mentions, with no encoder work of its own (the memories' embeddings
  exist already). It lets the read path link a query to entities it names by meaning.
* A **stage**'s vector is the centroid of its memories' embeddings: stage inference by vector.

Both are stored unnormalised (the vector indexes compare by cosine) with ``embedding_n``, the
number of memories averaged, so that adding memories is exact: ``(mean·n + Σ new) / (n + k)``.
Deleting a memory takes its embedding back out (``ingest/delete_memory``); moving memories
between stages recomputes the centroids of the stages involved.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = ["group_vectors", "running_mean", "vector_rows"]

_TINY = 1e-9


def running_mean(
    old: Sequence[float] | np.ndarray | None, n: int, new: Sequence[np.ndarray]
) -> tuple[np.ndarray, int]:
    """The mean of ``n`` earlier vectors (their mean ``old``) and ``new``, and its count."""
    if not new:
        raise ValueError("nothing to add")
    total = np.sum(np.asarray(new, dtype=np.float64), axis=0)
    if old is not None and n > 0:
        total = total + np.asarray(old, dtype=np.float64) * n
    else:
        n = 0
    count = n + len(new)
    return (total / count).astype(np.float32), count


def vector_rows(
    additions: dict[str, list[np.ndarray]],
    current: dict[str, tuple[Any, int]],
) -> list[dict[str, Any]]:
    """Rows for ``ingest/set_entity_vectors`` / ``set_stage_vectors``: for each key with new
    memory vectors, the updated mean (``current`` holds the stored mean and count)."""
    rows = []
    for key in sorted(additions):
        old, n = current.get(key, (None, 0))
        mean, count = running_mean(old, n, additions[key])
        if float(np.linalg.norm(mean)) > _TINY:
            rows.append({"key": key, "embedding": mean.tolist(), "n": count})
    return rows


def group_vectors(pairs: Iterable[tuple[str, np.ndarray | None]]) -> dict[str, list[np.ndarray]]:
    """``{key: [vectors]}`` from ``(key, vector)`` pairs, skipping missing vectors."""
    out: dict[str, list[np.ndarray]] = {}
    for key, vec in pairs:
        if vec is not None:
            out.setdefault(key, []).append(np.asarray(vec, dtype=np.float32))
    return out
