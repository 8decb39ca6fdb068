"""The typed report of one assembly: every decision, as the response's ``report`` shows it.

Fields typed ``X | MISSING`` appear in the JSON only when the step that owns them set them
(e.g. ``related_prior.ppr_runs`` only when a PageRank walk ran); fields typed ``X | None`` are
always there and may be ``null``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import MISSING, BaseModel, ConfigDict

from pipelines.prompt import decomposer

__all__ = [
    "AssemblyReport",
    "BudgetReport",
    "ContextResponse",
    "CurrentStagePhase",
    "Density",
    "FactsPhase",
    "FlatPhase",
    "ItemReport",
    "Mode",
    "PhaseCounts",
    "PhasesReport",
    "RelatedFacts",
    "RelatedPriorPhase",
    "SlotReport",
    "StageReport",
    "StageVote",
    "SummariesFacts",
    "SummariesPhase",
    "Validity",
]

Mode = Literal["staged", "flat"]


class _Report(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape (fields left ``MISSING`` are absent)."""
        return self.model_dump(mode="json")


class Validity(_Report):
    include_superseded: bool
    as_of: str | None
    known_at: str | None = None


class Density(_Report):
    """The counts the density gate decided on."""

    memories: int
    stages: int
    memories_per_stage: float
    memories_per_dimension: float
    use_stages: bool


class StageVote(_Report):
    """The evidence of an inferred stage (``scores`` and ``summary_similarity`` only with
    ``explain``)."""

    score: float | None
    runner_up: str | None
    margin: float | None
    tie_broken_by_recency: bool
    fallback: bool
    evidence_hits: int
    summaries_compared: int
    scores: dict[str, float] | MISSING = MISSING
    summary_similarity: dict[str, float] | MISSING = MISSING


class StageReport(_Report):
    """Which stage, how it was found, whether the context used it, and why.  The vote
    fields are there only for an inferred stage (``scores`` and ``summary_similarity`` only
    with ``explain``)."""

    id: str | None
    name: str | None
    how: str
    """``caller``, ``session``, ``inferred`` or ``none``."""
    used: bool
    reasoning: str
    score: float | MISSING | None = MISSING
    runner_up: str | MISSING | None = MISSING
    margin: float | MISSING | None = MISSING
    tie_broken_by_recency: bool | MISSING = MISSING
    fallback: bool | MISSING = MISSING
    evidence_hits: int | MISSING = MISSING
    summaries_compared: int | MISSING = MISSING
    scores: dict[str, float] | MISSING = MISSING
    summary_similarity: dict[str, float] | MISSING = MISSING
    confidence: float | MISSING = MISSING


class BudgetReport(_Report):
    """The decomposer's budget quantities, the sections' share, and (staged mode) the plan."""

    context_window: int
    headroom: float
    ceiling: int
    shell_tokens: int
    budget: int
    limit: int
    content_budget: int
    section_budget: int
    split: list[float]
    effective_split: list[float] | MISSING = MISSING
    phase_shares: list[int] | MISSING = MISSING
    phase_planned_tokens: list[int] | MISSING = MISSING
    phase_granted: list[int] | MISSING = MISSING
    fits: bool


class ItemReport(_Report):
    """One candidate of a phase (``explain``): its tokens, score, whether it was selected,
    and the evidence of the step that ranked it."""

    id: str
    tokens: int
    score: float | None
    selected: bool | MISSING = MISSING
    rank: int | MISSING = MISSING
    mmr_gain: float | MISSING = MISSING
    ppr_mass: float | MISSING = MISSING
    via: list[str] | MISSING = MISSING
    ranks: dict[str, int] | MISSING = MISSING
    fused: float | MISSING = MISSING
    source: str | MISSING = MISSING
    """A fact's turn (the memory it was extracted from)."""


class PhaseCounts(_Report):
    """What planning and the decomposer left of a phase's ranked candidates."""

    selected: int
    dropped: int
    minimum: int
    share_tokens: int
    items: list[ItemReport] | MISSING = MISSING
    included: int


class CurrentStagePhase(PhaseCounts):
    candidates: int
    selection: Literal["mmr", "score"]


class RelatedFacts(_Report):
    """How Phase 2 ranked its candidates: PageRank from the Phase-1 entities, fused with
    whole-space recall (``reason`` says why a step did not run)."""

    run: bool
    reason: str | MISSING = MISSING
    ppr: bool | MISSING = MISSING
    ppr_weight: float | MISSING = MISSING
    seed_memories: int | MISSING = MISSING
    seed_entities: int | MISSING = MISSING
    memories_without_entities: int | MISSING = MISSING
    graph: str | MISSING | None = MISSING
    seed_groups: int | MISSING = MISSING
    ppr_runs: int | MISSING = MISSING
    seed_groups_without_nodes: int | MISSING = MISSING
    projection_rechecked: bool | MISSING = MISSING
    entities: int | MISSING = MISSING
    top_entities: dict[str, float] | MISSING = MISSING
    ranking: str | MISSING = MISSING
    ppr_candidates: int | MISSING = MISSING
    recall_candidates: int | MISSING = MISSING


class RelatedPriorPhase(PhaseCounts, RelatedFacts):
    """Phase 2's report."""


class SummariesFacts(_Report):
    """What Phase 3 read: summaries of the stages phases 1-2 did not cover."""

    run: bool
    reason: str | MISSING = MISSING
    uncovered_stages: int | MISSING = MISSING
    covered_stages: list[str] | MISSING = MISSING
    summaries_read: int | MISSING = MISSING
    empty_summaries: int | MISSING = MISSING
    stale_summaries: int | MISSING = MISSING
    """Summaries used although their stage changed since they were built (rebuild queued)."""
    unbuilt_summaries: int | MISSING = MISSING
    """Stages left out because their summary is not built yet (build queued)."""


class SummariesPhase(PhaseCounts, SummariesFacts):
    """Phase 3's report."""

    included_stages: list[str]
    section: str | MISSING = MISSING
    """Set when the section was left out of the prompt, with the reason."""


class FlatPhase(_Report):
    """Flat mode's one section: whole-space recall packed into the budget."""

    candidates: int
    selected: int
    dropped: int
    intent: str
    recall: str
    recall_k: int
    compact: int
    """Records shown compact (their best matching sentence) among those selected."""
    items: list[ItemReport] | MISSING = MISSING
    included: int


class FactsPhase(_Report):
    """The facts (the compact tier, either mode): read, chosen for their share, still in the
    prompt, and the distinct turns those came from."""

    candidates: int
    selected: int
    share_tokens: int
    included: int
    turns: int
    items: list[ItemReport] | MISSING = MISSING


class PhasesReport(_Report):
    current_stage: CurrentStagePhase | MISSING = MISSING
    related_prior: RelatedPriorPhase | MISSING = MISSING
    stage_summaries: SummariesPhase | MISSING = MISSING
    recalled: FlatPhase | MISSING = MISSING
    facts: FactsPhase | MISSING = MISSING


class SlotReport(_Report):
    """One prompt slot after the decomposer (see
    :class:`~pipelines.prompt.decomposer.SlotReport`)."""

    key: str
    priority: int
    original_tokens: int
    input_tokens: int
    final_tokens: int
    retention: float
    share: int | None
    condenser: str | None

    @classmethod
    def of(cls, slot: decomposer.SlotReport) -> SlotReport:
        """The decomposer's report of a slot as the response shows it: these fields of it
        (not its content), the retention to four places."""
        shown = {name: getattr(slot, name) for name in cls.model_fields}
        return cls.model_validate({**shown, "retention": round(slot.retention, 4)})


class AssemblyReport(_Report):
    """Every decision of one assembly (the response's ``report``)."""

    validity: Validity
    ablate: list[str]
    mode: Mode
    mode_reason: str
    density: Density | None
    stage: StageReport | MISSING = MISSING
    total_tokens: int
    tokens: dict[str, int]
    budget: BudgetReport
    phases: PhasesReport
    slots: list[SlotReport]
    retention: dict[str, float]
    condensers: dict[str, str]
    warning: str | None
    fast_path: bool
    safety_iterations: int
    timings_ms: dict[str, float]


@dataclass(frozen=True)
class ContextResponse:
    sections: dict[str, str]
    """``current_stage``, ``related_prior``, ``stage_summaries`` (and ``recalled`` in flat
    mode; ``facts`` when facts are shown): the section text as it stands in the prompt."""
    prompt: str
    report: AssemblyReport
    included_ids: dict[str, list[str]]
    """Memory ids per section whose record made it into the prompt (summaries are not
    memories: their stage ids are in ``report.phases.stage_summaries.included_stages``; for
    ``facts``, the turns the facts shown came from)."""
