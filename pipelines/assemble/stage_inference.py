"""The inferred-stage choice record and the density gate.

:class:`StageChoice` is what :func:`~pipelines.assemble.plan.vote_stages` decides: the
current stage chosen from query-derived evidence only, nothing about the expected answer.

The density gate decides whether stage-aware assembly is worth it at all.  The design notes
measured stage scoping net-flat (and harmful for multi-session questions) on a small corpus
(94 memories, rho = memories / embedding dimensions = 0.24) and clearly helpful on a dense one
(7,500 memories, rho = 19.5), and argue the crossover is a property of corpus density, rho
above ~1.  So below ``density_min_memories_per_dimension`` (when the embedding dimension is
known), below ``density_min_memories_per_stage`` or with fewer than ``density_min_stages``
stages the service uses flat recall.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pipelines.assemble.config import DEFAULT_ASSEMBLY_CONFIG, AssemblyConfig
from pipelines.graph import GraphStore, Row

__all__ = ["DensityCache", "DensityDecision", "StageChoice", "density_gate"]


@dataclass(frozen=True, slots=True)
class StageChoice:
    """The inferred stage and why."""

    stage: str | None
    score: float | None
    runner_up: str | None
    margin: float | None
    """Best score minus the runner-up's (``None`` without a scored runner-up)."""
    tie_broken_by_recency: bool
    fallback: bool
    """No stage matched convincingly; the most recent one was taken."""
    scores: dict[str, float]
    reasoning: str


@dataclass(frozen=True, slots=True)
class DensityDecision:
    """Whether to use stage-aware assembly for a corpus."""

    use_stages: bool
    memories_per_stage: float
    reason: str


def density_gate(
    memory_count: int,
    stage_count: int,
    config: AssemblyConfig = DEFAULT_ASSEMBLY_CONFIG,
    dimensions: int | None = None,
) -> DensityDecision:
    """Stage-aware assembly only for corpora dense enough to need it.

    ``dimensions`` (of the embedding model) enables the corpus-density criterion
    ``memory_count / dimensions >= density_min_memories_per_dimension``.
    """
    if memory_count < 0 or stage_count < 0:
        raise ValueError("counts must be non-negative")
    if dimensions is not None and dimensions < 1:
        raise ValueError("dimensions must be >= 1")
    per_stage = memory_count / stage_count if stage_count else 0.0
    if stage_count < config.density_min_stages:
        return DensityDecision(
            False,
            per_stage,
            f"{stage_count} stage(s) < {config.density_min_stages}: flat recall.",
        )
    if dimensions is not None:
        rho = memory_count / dimensions
        if rho < config.density_min_memories_per_dimension:
            return DensityDecision(
                False,
                per_stage,
                f"corpus density {memory_count}/{dimensions} = {rho:.2f} memories per embedding "
                f"dimension < {config.density_min_memories_per_dimension:g}: too small for "
                "stage scoping, flat recall.",
            )
    if per_stage < config.density_min_memories_per_stage:
        return DensityDecision(
            False,
            per_stage,
            f"{per_stage:.1f} memories per stage < {config.density_min_memories_per_stage:g}: "
            "corpus too sparse for stage scoping, flat recall.",
        )
    return DensityDecision(
        True,
        per_stage,
        f"{per_stage:.1f} memories per stage >= {config.density_min_memories_per_stage:g}: "
        "stage-aware assembly.",
    )


class DensityCache:
    """A space's memory and stage counts for the density gate, reused for ``ttl_s`` seconds
    (never with ``as_of``: those counts depend on the moment); at most ``size`` entries,
    least recently used dropped first.  Thread-safe."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str, tuple[str, ...]], tuple[float, Row]] = OrderedDict()
        self._lock = threading.Lock()

    def counts(
        self,
        store: GraphStore,
        space: str,
        statuses: Sequence[str],
        as_of: datetime | None,
        ttl_s: float,
    ) -> Row:
        key = (space, tuple(statuses))
        now = time.monotonic()
        cacheable = as_of is None and ttl_s > 0
        if cacheable:
            with self._lock:
                hit = self._entries.get(key)
                if hit is not None:
                    self._entries.move_to_end(key)
            if hit is not None and hit[0] > now:
                return hit[1]
        row = store.read("assemble/density", space=space, statuses=list(statuses), as_of=as_of)[0]
        if cacheable:
            with self._lock:
                self._entries[key] = (now + ttl_s, row)
                self._entries.move_to_end(key)
                while len(self._entries) > self.size:
                    self._entries.popitem(last=False)
        return row
