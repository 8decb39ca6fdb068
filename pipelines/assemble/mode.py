"""Staged or flat: the gates that decide whether a stage scopes the context.

* **Density gate** (:func:`choose_mode`): small or sparse corpora get flat recall
  (:func:`~pipelines.assemble.stage_inference.density_gate`); the counts it needs are cached
  per space (:class:`DensityCache`).  The flat preset's ``Mode(flat=True)`` forces flat.
* **Budget gate** (:func:`budget_gate`): below ``inferred_stage_min_tokens`` section tokens no
  stage is inferred: a small context is flat unless the caller names its stage.
* **Confidence gate** (:func:`~pipelines.assemble.stage.confidence_gate`): an inferred
  stage at confidence ``<= flat_below_confidence`` is not used; the context is flat.

Every gate that chooses flat mode says why (``report.mode_reason``) and switches the
assembly's state to flat mode: the preset's flat steps run from there (:class:`ModeGate`,
:class:`BudgetGate`; the confidence gate, :func:`~pipelines.assemble.stage.confidence_gate`,
is :class:`~pipelines.assemble.stage.CurrentStage`'s).
"""

from __future__ import annotations

from dataclasses import dataclass

from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.report import Density, Mode
from pipelines.assemble.run import Run
from pipelines.assemble.stage_inference import DensityCache, density_gate

__all__ = [
    "DensityCache",
    "ModeChoice",
    "budget_gate",
    "choose_mode",
    "decide_mode",
]


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


def choose_mode(run: Run, cache: DensityCache, flat: bool = False) -> ModeChoice:
    """The density gate on the space's counts (``flat``: forced flat mode, reads none)."""
    if flat:
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
    (:func:`~pipelines.assemble.stage_inference.density_gate`); ``forced_flat``: the flat
    preset, whatever the counts."""
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
