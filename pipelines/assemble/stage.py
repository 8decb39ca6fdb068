"""The current stage: named by the caller, or inferred from the query alone.

* **Named** (:func:`named_stage`): the caller's ``stage`` (id, label or name), else the stage
  of its ``session``; 404 naming the field when it does not exist.
* **Inferred** (:func:`infer_current_stage`): whole-space recall votes for each hit's stage by rank
  (``1 / (c + rank)``), and the stages ranked by the query's similarity to their schema
  summaries vote likewise (:func:`~pipelines.assemble.plan.vote_stages`); ties go to the most
  recent stage.  Never from benchmark gold data.  The vote margin over the runner-up becomes
  the stage's confidence (:func:`~pipelines.assemble.plan.stage_confidence`).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.items import Stage, stage_row, timestamp
from pipelines.assemble.plan import stage_confidence, vote_stages
from pipelines.assemble.recalls import SPACE_PRESET
from pipelines.assemble.report import StageReport, StageVote
from pipelines.assemble.run import Run
from pipelines.errors import NotFound
from pipelines.graph import Row
from pipelines.recall.service import RecallHit

__all__ = [
    "Inference",
    "infer_current_stage",
    "named_stage",
    "stage_report",
    "summary_similarity_ahead",
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
