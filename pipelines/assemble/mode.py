"""Staged or flat: the gates that decide whether a stage scopes the context.

* **Density gate** (:func:`choose_mode`): small or sparse corpora get flat recall
  (:func:`~pipelines.assemble.stage_inference.density_gate`); the counts it needs are cached
  per space (:class:`DensityCache`).  The benchmark's ``Experiment(flat=True)`` forces flat.
* **Budget gate** (:func:`budget_gate`): below ``inferred_stage_min_tokens`` section tokens no
  stage is inferred: a small context is flat unless the caller names its stage.
* **Confidence gate** (:func:`confidence_gate`): an inferred stage at confidence
  ``<= flat_below_confidence`` is not used; the context is flat.

Every gate that chooses flat mode says why (``report.mode_reason``).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.report import Density, Mode
from pipelines.assemble.run import Run
from pipelines.assemble.stage import Inference
from pipelines.assemble.stage_inference import density_gate
from pipelines.graph import GraphStore, Row

__all__ = [
    "DensityCache",
    "ModeChoice",
    "budget_gate",
    "choose_mode",
    "confidence_gate",
    "decide_mode",
]


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


@dataclass(frozen=True)
class ModeChoice:
    mode: Mode
    reason: str
    density: Density | None
    """The counts the density gate used (``None`` when flat mode was forced)."""

    @property
    def stage_count(self) -> int:
        """Stages of the space as the gate counted them (cached counts: only ever used to
        size reads, never to decide what is in the context)."""
        return self.density.stages if self.density is not None else 0


def choose_mode(run: Run, cache: DensityCache) -> ModeChoice:
    """The density gate on the space's counts (forced flat mode reads none)."""
    if run.experiment.flat:
        return decide_mode(True, 0, 0, run.config, run.embedder.dimensions)
    statuses = ["active", "superseded"] if run.with_superseded else ["active"]
    cfg = run.config
    row = cache.counts(run.store, run.space, statuses, run.as_of, cfg.density_cache_ttl_s)
    return decide_mode(
        False, int(row["memories"]), int(row["stages"]), cfg, run.embedder.dimensions
    )


def decide_mode(
    forced_flat: bool, memories: int, stages: int, config: AssemblyConfig, dimensions: int
) -> ModeChoice:
    """Staged assembly only for corpora dense enough to need it
    (:func:`~pipelines.assemble.stage_inference.density_gate`); ``forced_flat``: the
    benchmark's flat mode, whatever the counts."""
    if forced_flat:
        return ModeChoice("flat", "flat recall requested (flat=true)", None)
    decision = density_gate(memories, stages, config, dimensions=dimensions)
    density = Density(
        memories=memories,
        stages=stages,
        memories_per_stage=round(decision.memories_per_stage, 3),
        memories_per_dimension=round(memories / dimensions, 3),
        use_stages=decision.use_stages,
    )
    return ModeChoice("staged" if decision.use_stages else "flat", decision.reason, density)


def budget_gate(config: AssemblyConfig, section_budget: int) -> str | None:
    """Why a context whose stage would be inferred is flat for its budget (``None``: it is
    not)."""
    least = config.inferred_stage_min_tokens
    if least is None or section_budget >= least:
        return None
    return (
        f"budget too small for an inferred stage: {section_budget} section tokens < "
        f"inferred_stage_min_tokens {least}; flat recall over the space"
    )


def confidence_gate(config: AssemblyConfig, inference: Inference) -> str | None:
    """Why an inferred stage is not used (``None``: it is)."""
    gate = config.flat_below_confidence
    if gate is None or inference.confidence > gate:
        return None
    name = inference.stage.name if inference.stage else None
    return (
        f"stage inference not confident: {name or 'no stage'} at confidence "
        f"{inference.confidence:.3f} <= flat_below_confidence {gate:g}; flat recall over the "
        "space"
    )
