"""The current stage: named by the caller, or inferred from the query alone.

* **Named** (:func:`named_stage`): the caller's ``stage`` (id, label or name), else the stage
  of its ``session``; 404 naming the field when it does not exist.
* **Inferred** (:func:`infer_current_stage`): whole-space recall votes for each hit's stage by rank
  (``1 / (c + rank)``), and the stages ranked by the query's similarity to their schema
  summaries vote likewise (:func:`~pipelines.assemble.plan.vote_stages`); ties go to the most
  recent stage.  Never from benchmark gold data.  The vote margin over the runner-up becomes
  the stage's confidence (:func:`~pipelines.assemble.plan.stage_confidence`).

Staged or flat: the gates that decide whether a stage scopes the context.

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

from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from pipelines.assemble.config import DEFAULT_ASSEMBLY_CONFIG, AssemblyConfig
from pipelines.assemble.items import Stage, stage_row, timestamp
from pipelines.assemble.recalls import SPACE_PRESET
from pipelines.assemble.report import Density, Mode, StageReport, StageVote
from pipelines.assemble.request import DensityCache, Run
from pipelines.errors import NotFound
from pipelines.graph import Row
from pipelines.recall.service import RecallHit

__all__ = [
    "DensityCache",
    "DensityDecision",
    "Inference",
    "ModeChoice",
    "StageChoice",
    "budget_gate",
    "choose_mode",
    "confident_split",
    "decide_mode",
    "density_gate",
    "infer_current_stage",
    "named_stage",
    "stage_confidence",
    "stage_report",
    "summary_similarity_ahead",
    "vote_stages",
]


def named_stage(run: Run) -> tuple[Stage | None, str | None]:
    """The stage the caller named (``stage``, else ``session``) and how (``caller`` or
    ``session``); ``(None, None)`` when it named none or the session has no stage."""
    req = run.request
    if req.stage is not None:
        name = req.stage
        ids = list(dict.fromkeys([name, "label:" + " ".join(name.split()).casefold()]))
        rows = run.store.read("assemble/stage_lookup", space=run.space, ids=ids, name=name)
        if not rows:
            raise NotFound(f"stage {name!r} does not exist in this space", field="stage")
        return stage_row(rows[0]), "caller"
    if req.session is not None:
        rows = run.store.read("assemble/session_stage", space=run.space, session=req.session)
        if not rows:
            raise NotFound(f"session {req.session!r} does not exist in this space", field="session")
        if rows[0]["id"] is None:
            return None, None
        return stage_row(rows[0]), "session"
    return None, None


def summary_similarity_ahead(run: Run, stage_count: int) -> Future[list[Row]]:
    """Start reading the query's similarity to the stage summaries (for stage inference).
    The query is embedded here as whole-space recall will embed it (the memo then spares
    recall the work), so the read runs beside that recall."""
    text = run.recaller.vector_text(run.space, run.request.query, SPACE_PRESET)
    embedding = run.embedder.encode([text])[0]
    count = max(1, stage_count)
    return run.read_ahead.submit(
        run.store.read,
        "assemble/schema_similarity",
        space=run.space,
        embedding=[float(x) for x in embedding],
        fetch=max(4 * count, 20),
        limit=count,
    )


@dataclass(frozen=True)
class Inference:
    """An inferred stage (``None``: no stage to choose), why, the vote's evidence (``None``
    without stages to vote for), and the stage's confidence in [0, 1]."""

    stage: Stage | None
    reasoning: str
    vote: StageVote | None
    confidence: float


def infer_current_stage(
    run: Run,
    stages: dict[str, Stage],
    hits: Sequence[RecallHit],
    similarity: Future[list[Row]] | None,
) -> Inference:
    """The current stage by rank votes of whole-space recall's ``hits`` and of the summary
    ``similarity`` read ahead."""
    cfg = run.config
    if not stages:
        return Inference(None, "the space has no stages", None, 0.0)
    evidence = [h.stage_id for h in hits[: cfg.stage_inference_hits]]
    summary: dict[str, float] = {}
    if similarity is not None:
        summary = {
            r["stage_id"]: 2.0 * float(r["score"]) - 1.0
            for r in similarity.result()
            if r["stage_id"] in stages
        }
    recency = {
        sid: float(s.ordinal) if s.ordinal is not None else timestamp(s.ended_at)
        for sid, s in stages.items()
    }
    choice = vote_stages(evidence, summary, recency, cfg)
    vote = StageVote(
        score=choice.score,
        runner_up=choice.runner_up,
        margin=choice.margin,
        tie_broken_by_recency=choice.tie_broken_by_recency,
        fallback=choice.fallback,
        evidence_hits=len(evidence),
        summaries_compared=len(summary),
    )
    if run.explain:
        vote.scores = {k: round(v, 6) for k, v in choice.scores.items()}
        vote.summary_similarity = {k: round(v, 4) for k, v in summary.items()}
    stage = stages.get(choice.stage) if choice.stage else None
    return Inference(stage, choice.reasoning, vote, stage_confidence(choice, cfg))


def stage_report(
    stage: Stage | None,
    how: str,
    used: bool,
    reasoning: str,
    vote: StageVote | None = None,
    confidence: float | None = None,
) -> StageReport:
    """``report.stage``: which stage, how it was found, whether the context used it, why
    (with the vote of an inferred stage, and the confidence its share was scaled by)."""
    report = StageReport(
        id=stage.id if stage else None,
        name=stage.name if stage else None,
        how=how,
        used=used,
        reasoning=reasoning,
        **(dict(vote) if vote is not None else {}),
    )
    if confidence is not None:
        report.confidence = round(confidence, 4)
    return report


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


#: The flat preset's choice, whatever the counts (none are read).
FORCED_FLAT = ModeChoice("flat", "flat recall requested (flat=true)", None)


def choose_mode(run: Run, cache: DensityCache, flat: bool = False) -> ModeChoice:
    """The density gate on the space's counts (``flat``: :data:`FORCED_FLAT`, reads none)."""
    if flat:
        return FORCED_FLAT
    statuses = ["active", "superseded"] if run.with_superseded else ["active"]
    cfg = run.config
    row = cache.counts(run.store, run.space, statuses, run.as_of, cfg.density_cache_ttl_s)
    return decide_mode(int(row["memories"]), int(row["stages"]), cfg, run.embedder.dimensions)


def decide_mode(memories: int, stages: int, config: AssemblyConfig, dimensions: int) -> ModeChoice:
    """Staged assembly only for corpora dense enough to need it
    (:func:`~pipelines.assemble.stage_inference.density_gate`)."""
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


def vote_stages(
    ranked_hit_stages: Sequence[str | None],
    summary_similarity: Mapping[str, float],
    recency: Mapping[str, float],
    config: AssemblyConfig = DEFAULT_ASSEMBLY_CONFIG,
) -> StageChoice:
    """The current stage from the query's recalled hits, by rank votes.

    A hit at rank ``r`` (1-based) gives its stage ``w_hits / (c + r)``; the stages whose schema
    summary is built, ranked by the query's similarity to it, get ``w_summaries / (c + r)``
    (``c`` = ``stage_vote_rank_constant``).  The best total wins; every stage within
    ``stage_tie_margin`` (relative) of it counts as tied and the most recent tied stage wins.
    With no votes at all the most recent stage is taken (``fallback``).  Hits of stages not
    in ``recency`` (e.g. not started at ``as_of``) are ignored.  Only query-derived evidence.

    Why votes and not similarities: recall's fused ranking (vector, full text, entities,
    rerank) already ordered the memories; several well-ranked hits of one stage are the
    evidence that the query is about it.
    """
    votes, ranked_summaries = _votes(ranked_hit_stages, summary_similarity, recency, config)
    stages = list(recency)

    def most_recent(candidates: Sequence[str]) -> str:
        return max(candidates, key=lambda st: (recency[st], -stages.index(st)))

    if not votes:
        if not stages:
            return StageChoice(None, None, None, None, False, False, {}, "No stages.")
        stage = most_recent(stages)
        return StageChoice(
            stage,
            None,
            None,
            None,
            False,
            True,
            {},
            f"No recalled memory or summary points at a stage; chose the most recent, {stage!r}.",
        )
    best = max(votes.values())
    tied = [st for st in votes if votes[st] >= best * (1.0 - config.stage_tie_margin)]
    stage = most_recent(tied)
    others = sorted((st for st in votes if st != stage), key=lambda st: -votes[st])
    runner_up = others[0] if others else None
    margin = votes[stage] - votes[runner_up] if runner_up is not None else None
    return StageChoice(
        stage=stage,
        score=votes[stage],
        runner_up=runner_up,
        margin=margin,
        tie_broken_by_recency=len(tied) > 1,
        fallback=False,
        scores=votes,
        reasoning=_vote_reasoning(
            stage, votes, tied, runner_up, margin, ranked_hit_stages, ranked_summaries
        ),
    )


def _votes(
    ranked_hit_stages: Sequence[str | None],
    summary_similarity: Mapping[str, float],
    recency: Mapping[str, float],
    config: AssemblyConfig,
) -> tuple[dict[str, float], list[str]]:
    """Each stage's positive vote total (hits and summaries by rank), and the stages ranked
    by summary similarity."""
    c = config.stage_vote_rank_constant
    votes: dict[str, float] = {}
    for rank, stage in enumerate(ranked_hit_stages, start=1):
        if stage is not None and stage in recency:
            votes[stage] = votes.get(stage, 0.0) + config.stage_vote_weight_hits / (c + rank)
    ranked_summaries = sorted(
        (st for st in summary_similarity if st in recency),
        key=lambda st: (-summary_similarity[st], st),
    )
    for rank, stage in enumerate(ranked_summaries, start=1):
        votes[stage] = votes.get(stage, 0.0) + config.stage_vote_weight_summaries / (c + rank)
    return {st: v for st, v in votes.items() if v > 0}, ranked_summaries


def _vote_reasoning(
    stage: str,
    votes: Mapping[str, float],
    tied: Sequence[str],
    runner_up: str | None,
    margin: float | None,
    ranked_hit_stages: Sequence[str | None],
    ranked_summaries: Sequence[str],
) -> str:
    """Why :func:`vote_stages` chose ``stage``, in one sentence."""
    if len(tied) > 1:
        best = max(votes.values())
        return (
            f"{len(tied)} stages tied on recall votes ({best:.4f}): "
            f"{', '.join(map(repr, sorted(tied)))}; chose the most recent, {stage!r}."
        )
    hits = sum(1 for st in ranked_hit_stages if st == stage)
    return (
        f"Stage {stage!r} has the most recall votes ({votes[stage]:.4f}, {hits} of the "
        f"{len(ranked_hit_stages)} hits"
        + (
            f", summary rank {ranked_summaries.index(stage) + 1}"
            if stage in ranked_summaries
            else ""
        )
        + ")"
        + (f", {margin:.4f} ahead of {runner_up!r}." if runner_up is not None else ".")
    )


def stage_confidence(
    choice: StageChoice, config: AssemblyConfig = DEFAULT_ASSEMBLY_CONFIG
) -> float:
    """How sure the vote is, in [0, 1]: the relative margin ``(best - runner_up) / best``
    (1 without a runner-up) mapped linearly from ``stage_confidence_floor`` (0) to
    ``stage_confidence_full`` (1).  A fallback choice (no evidence) has confidence 0."""
    if choice.stage is None or choice.fallback or not choice.score:
        return 0.0
    margin = 1.0 if choice.margin is None else max(0.0, choice.margin) / choice.score
    low, full = config.stage_confidence_floor, config.stage_confidence_full
    if full <= low:
        return 1.0 if margin >= full else 0.0
    return min(1.0, max(0.0, (margin - low) / (full - low)))


def confident_split(split: Sequence[float], confidence: float) -> tuple[float, float, float]:
    """The phase split with the current stage's share scaled by ``confidence``; what it gives
    up goes to related context (Phase 2).  Still sums to 1."""
    if len(split) != 3:
        raise ValueError("split has three parts")
    c = min(1.0, max(0.0, confidence))
    return (split[0] * c, split[1] + split[0] * (1.0 - c), split[2])
