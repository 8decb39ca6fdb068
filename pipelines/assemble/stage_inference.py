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

from dataclasses import dataclass

from pipelines.assemble.config import DEFAULT_ASSEMBLY_CONFIG, AssemblyConfig

__all__ = ["DensityDecision", "StageChoice", "density_gate"]


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
