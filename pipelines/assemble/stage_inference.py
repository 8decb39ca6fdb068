"""Choosing the current stage from query evidence, and the density gate.

When the caller does not say which stage a query belongs to, the service
measures how similar the query is to each stage (the best and mean similarity
to the stage's memories, the similarity to its summary) and hands those
numbers here.  Only query-derived evidence enters; nothing about the expected
answer does.

Scoring: a stage's score is the weighted mean of the signals it has
(weights ``stage_weight_max/mean/summary``, renormalised over the signals
present, so a stage without a summary is not penalised for it).  The best
score wins; every stage within ``stage_tie_margin`` of it counts as tied and
the most recent of those wins (conversations usually continue the latest
topic).  If even the best score is below ``stage_min_score`` nothing matched
convincingly and the most recent stage is chosen, flagged as a fallback.

The density gate decides whether stage-aware assembly is worth it at all.  The
design notes measured stage scoping net-flat (and harmful for multi-session
questions) on a small corpus (94 memories, rho = memories / embedding dimensions
= 0.24) and clearly helpful on a dense one (7,500 memories, rho = 19.5), and
argue the crossover is a property of corpus density, rho above ~1.  So below
``density_min_memories_per_dimension`` (when the embedding dimension is known),
below ``density_min_memories_per_stage`` or with fewer than
``density_min_stages`` stages the service uses flat recall.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipelines.assemble.config import DEFAULT_ASSEMBLY_CONFIG, AssemblyConfig

__all__ = [
    "DensityDecision",
    "StageChoice",
    "StageEvidence",
    "density_gate",
    "infer_stage",
    "stage_score",
]


@dataclass(frozen=True, slots=True)
class StageEvidence:
    """Query-derived evidence for one stage.

    Similarities are in whatever scale the caller uses (cosine in [-1, 1]
    typically); ``None`` means the signal is unavailable.  ``recency`` is any
    number that grows with recency (last activity timestamp, stage ordinal).
    """

    stage: str
    max_similarity: float | None = None
    mean_similarity: float | None = None
    summary_similarity: float | None = None
    recency: float = 0.0


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


def stage_score(
    evidence: StageEvidence, config: AssemblyConfig = DEFAULT_ASSEMBLY_CONFIG
) -> float | None:
    """Weighted mean of the available signals, or ``None`` if there are none."""
    pairs = [
        (config.stage_weight_max, evidence.max_similarity),
        (config.stage_weight_mean, evidence.mean_similarity),
        (config.stage_weight_summary, evidence.summary_similarity),
    ]
    present = [(w, v) for w, v in pairs if v is not None and w > 0]
    total = sum(w for w, _ in present)
    if total <= 0:
        return None
    return sum(w * v for w, v in present) / total


def infer_stage(
    evidence: Sequence[StageEvidence], config: AssemblyConfig = DEFAULT_ASSEMBLY_CONFIG
) -> StageChoice:
    """Pick the current stage (see the module docstring for the rule).

    Deterministic: among stages tied on score and recency, the one listed
    first wins.  Returns ``stage=None`` only when ``evidence`` is empty.
    """
    if not evidence:
        return StageChoice(
            stage=None,
            score=None,
            runner_up=None,
            margin=None,
            tie_broken_by_recency=False,
            fallback=False,
            scores={},
            reasoning="No stages to choose from.",
        )
    stages = [e.stage for e in evidence]
    if len(set(stages)) != len(stages):
        raise ValueError("stages must be unique")
    recency = {e.stage: e.recency for e in evidence}

    def most_recent(candidates: Sequence[str]) -> str:
        return max(candidates, key=lambda s: (recency[s], -stages.index(s)))

    scores = {e.stage: s for e in evidence if (s := stage_score(e, config)) is not None}
    if not scores:
        stage = most_recent(stages)
        return StageChoice(
            stage=stage,
            score=None,
            runner_up=None,
            margin=None,
            tie_broken_by_recency=False,
            fallback=True,
            scores={},
            reasoning="No similarity evidence for any stage; chose the most recent stage "
            f"{stage!r}.",
        )
    ranked = sorted(scores, key=lambda s: -scores[s])
    best = scores[ranked[0]]
    if best < config.stage_min_score:
        stage = most_recent(stages)
        return StageChoice(
            stage=stage,
            score=scores.get(stage),
            runner_up=None,
            margin=None,
            tie_broken_by_recency=False,
            fallback=True,
            scores=scores,
            reasoning=f"Best similarity {best:.3f} ({ranked[0]!r}) is below "
            f"{config.stage_min_score:.3f}; no stage matches convincingly, so chose the most "
            f"recent stage {stage!r}.",
        )
    tied = [s for s in ranked if scores[s] >= best - config.stage_tie_margin]
    stage = most_recent(tied)
    others = [s for s in ranked if s != stage]
    runner_up = others[0] if others else None
    margin = scores[stage] - scores[runner_up] if runner_up is not None else None
    if len(tied) > 1:
        reasoning = (
            f"{len(tied)} stages scored within {config.stage_tie_margin:.3f} of the best "
            f"({best:.3f}): {', '.join(map(repr, tied))}; chose the most recent, {stage!r}."
        )
    else:
        reasoning = f"Stage {stage!r} has the highest query similarity ({best:.3f})" + (
            f", {margin:.3f} ahead of {runner_up!r}." if runner_up is not None else "."
        )
    return StageChoice(
        stage=stage,
        score=scores[stage],
        runner_up=runner_up,
        margin=margin,
        tie_broken_by_recency=len(tied) > 1,
        fallback=False,
        scores=scores,
        reasoning=reasoning,
    )


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
