"""One assembly as data: its inputs and services (:class:`~pipelines.assemble.run.Run`), what
its steps found so far
(:class:`AssemblyState`), the shape of a step (:class:`AssemblyStep`) and the runner that
calls a preset's steps in order (:func:`run_steps`), timing each one.

A step runs when the state's mode is one of its ``modes``: every assembly starts staged, and
a gate (density, budget, confidence) that chooses flat mode switches the state, so the steps
after it are flat mode's. Staged and flat contexts so come from one runner and one preset.

The report step: from the decomposed prompt to the response, for either mode. One
builder: each phase's report with its counts (staged mode's three phases, or flat mode's
records and summaries; the facts in both), the budget, the typed report of the whole
assembly, and the memory ids each section kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from pipelines.assemble.flat import FlatContext
from pipelines.assemble.items import Item, Stage
from pipelines.assemble.packing import StagedPack
from pipelines.assemble.recalls import Fact, SpaceRecall, facts_phase
from pipelines.assemble.related import Related
from pipelines.assemble.render import Layout, ReadBack, Rendering, budget_report, slot_reports
from pipelines.assemble.report import (
    AssemblyReport,
    BudgetReport,
    ContextResponse,
    CurrentStagePhase,
    ItemReport,
    Mode,
    PhaseCounts,
    PhasesReport,
    RelatedFacts,
    RelatedPriorPhase,
    StageReport,
    SummariesFacts,
    SummariesPhase,
    Validity,
)
from pipelines.assemble.request import FACTS_SECTION, FLAT_SECTION, SECTION_KEYS, Run
from pipelines.assemble.stage import ModeChoice
from pipelines.assemble.summaries import Ahead
from pipelines.graph import Row
from pipelines.prompt.decomposer import DecomposedPrompt

__all__ = ["AssemblyState", "AssemblyStep", "Reads", "assembly_report", "response", "run_steps"]


@dataclass
class Reads:
    """Reads started ahead, beside whole-space recall: the stage list, the projection check
    (PageRank on), the query's similarity to the stage summaries (an inferred stage)."""

    stages: Future[list[Row]]
    projection: Future[str | None] | None
    similarity: Future[list[Row]] | None


@dataclass
class AssemblyState:
    """What the steps of one assembly have found so far; each step reads and extends it."""

    run: Run
    ablate: tuple[str, ...] = ()
    choice: ModeChoice | None = None
    """The gates' choice of mode and why (staged until the mode gate has run)."""
    named: Stage | None = None
    how: str | None = None
    stage_report: StageReport | None = None
    layout: Layout | None = None
    reads: Reads | None = None
    facts_reading: Future[list[Fact]] | None = None
    recalled: SpaceRecall | None = None
    stages: dict[str, Stage] = field(default_factory=dict)
    current: Stage | None = None
    confidence: float = 0.0
    split: tuple[float, float, float] = (0.0, 0.0, 0.0)
    shares: tuple[int, int, int] = (0, 0, 0)
    minimums: tuple[int, int, int] = (0, 0, 0)
    selection: Literal["mmr", "score"] = "mmr"
    ahead: Ahead | None = None
    phase1: list[Item] = field(default_factory=list)
    related: Related | None = None
    phase3: list[Item] = field(default_factory=list)
    summaries_facts: SummariesFacts | None = None
    reused: bool = False
    flat_summaries: list[Item] = field(default_factory=list)
    flat_summaries_phase: SummariesPhase | None = None
    facts: list[Fact] = field(default_factory=list)
    staged_pack: StagedPack | None = None
    flat_pack: FlatContext | None = None
    rendering: Rendering | None = None
    result: DecomposedPrompt | None = None
    back: ReadBack | None = None
    response: ContextResponse | None = None

    @property
    def mode(self) -> Mode:
        """The mode the steps run in: the gates' choice, staged before the mode gate."""
        return self.choice.mode if self.choice is not None else "staged"

    def go_flat(self, reason: str, stage: StageReport | None) -> None:
        """A gate chose flat mode for ``reason``; ``stage``: the stage left unused."""
        assert self.choice is not None, "the mode gate runs before the gates that go flat"
        self.choice = replace(self.choice, mode="flat", reason=reason)
        self.stage_report = stage


class AssemblyStep(BaseModel):
    """One step of an assembly preset. Subclasses set ``kind`` (a literal: its name in the
    preset and in ``report.timings_ms``), the ``modes`` it runs in, and implement
    :meth:`run`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    modes: ClassVar[frozenset[Mode]] = frozenset({"staged", "flat"})
    #: Timed by the runner (the report step ends the clock itself).
    timed: ClassVar[bool] = True

    def run(self, state: AssemblyState) -> None:
        """Do the step: read and extend ``state``."""
        raise NotImplementedError


def run_steps(steps: Iterable[AssemblyStep], state: AssemblyState) -> None:
    """Run each step whose modes include the state's mode (a gate may switch it to flat
    between two steps), in order, each timed under its kind (and traced as
    ``assemble.<kind>``)."""
    for step in steps:
        if state.mode not in step.modes:
            continue
        step.run(state)
        if step.timed:
            state.run.clock.lap(step.kind)


def _counts(
    run: Run, items: Sequence[Item], count: int, minimum: int, share: int, included: int
) -> PhaseCounts:
    """A phase's counts: selected (the first ``count`` of its ranked ``items``), dropped,
    its minimum and share, what survived the decomposer, and (``explain``) every item."""
    counts = PhaseCounts(
        selected=count,
        dropped=max(0, len(items) - count),
        minimum=minimum,
        share_tokens=share,
        included=included,
    )
    if run.explain:
        counts.items = [
            ItemReport(id=i.id, tokens=i.tokens, score=i.score, selected=n < count, **i.detail)
            for n, i in enumerate(items)
        ]
    return counts


def _staged_phases(state: AssemblyState, back: ReadBack) -> PhasesReport:
    """The three phases' reports: how each ranked its candidates, and what planning and the
    decomposer kept of them."""
    run, pack = state.run, state.staged_pack
    assert pack is not None
    packed, mins, shares = pack.packed, state.minimums, state.shares
    related_items = state.related.items if state.related else []
    phases = [state.phase1, related_items, state.phase3]
    n, present = packed.counts, back.present
    current = CurrentStagePhase(
        candidates=len(phases[0]),
        selection=state.selection,
        **dict(_counts(run, phases[0], n[0], mins[0], shares[0], len(present["current_stage"]))),
    )
    facts2 = state.related.facts if state.related else RelatedFacts(run=False)
    related = RelatedPriorPhase(
        **dict(facts2),
        **dict(_counts(run, phases[1], n[1], mins[1], shares[1], len(present["related_prior"]))),
    )
    facts3 = state.summaries_facts or SummariesFacts(run=False, reason="ablated")
    shown = present.get("stage_summaries", [])
    summaries = SummariesPhase(
        **dict(facts3),
        **dict(_counts(run, phases[2], n[2], mins[2], shares[2], len(shown))),
        included_stages=[i.id for i in shown],
    )
    if not packed.with_summaries:
        summaries.section = "left out: no summary selected"
    report = PhasesReport(current_stage=current, related_prior=related, stage_summaries=summaries)
    if state.facts:
        shown = back.present.get(FACTS_SECTION, [])
        report.facts = facts_phase(run, state.facts, pack.facts, pack.sources, pack.share, shown)
    return report


def _flat_phases(state: AssemblyState, back: ReadBack) -> PhasesReport:
    """Flat mode's records (and summaries, facts): what the decomposer kept of them."""
    run, flat = state.run, state.flat_pack
    assert flat is not None
    flat.phase.included = len(back.present[FLAT_SECTION])
    phases = PhasesReport(recalled=flat.phase)
    if (summaries := state.flat_summaries_phase) is not None:
        shown = back.present.get("stage_summaries", [])
        summaries.included = len(shown)
        summaries.included_stages = [i.id for i in shown]
        phases.stage_summaries = summaries
    if state.facts:
        shown = back.present.get(FACTS_SECTION, [])
        share = flat.facts_share
        phases.facts = facts_phase(run, state.facts, flat.facts, flat.fact_sources, share, shown)
    return phases


def _budget(state: AssemblyState, result: DecomposedPrompt) -> BudgetReport:
    """The budget quantities; staged mode's with the split the current stage earned and the
    plan's shares, planned tokens and grants."""
    assert state.rendering is not None
    budget = budget_report(state.run, state.rendering.layout, result)
    if state.mode == "staged" and state.staged_pack is not None:
        packed = state.staged_pack.packed
        budget.effective_split = [round(x, 4) for x in state.split]
        budget.phase_shares = list(packed.plan.shares)
        budget.phase_planned_tokens = list(packed.plan.tokens)
        budget.phase_granted = list(packed.fitted.allocation.granted)
    return budget


def assembly_report(state: AssemblyState) -> AssemblyReport:
    """Every decision of the assembly in ``state`` (rendered and read back)."""
    run, result, back, choice = state.run, state.result, state.back, state.choice
    assert result is not None and back is not None and choice is not None
    phases = _staged_phases(state, back) if state.mode == "staged" else _flat_phases(state, back)
    report = AssemblyReport(
        validity=Validity(
            include_superseded=run.request.include_superseded,
            as_of=run.as_of.isoformat() if run.as_of else None,
            known_at=run.known_at.isoformat() if run.known_at else None,
        ),
        ablate=sorted(state.ablate),
        mode=choice.mode,
        mode_reason=choice.reason,
        density=choice.density,
        total_tokens=result.prompt_tokens,
        tokens=back.tokens,
        budget=_budget(state, result),
        phases=phases,
        slots=slot_reports(result),
        retention={s.key: round(s.retention, 4) for s in result.slots},
        condensers={s.key: s.condenser for s in result.slots if s.condenser is not None},
        warning=result.warning,
        fast_path=result.fast_path,
        safety_iterations=result.safety_iterations,
        timings_ms=run.clock.total(),
    )
    if state.stage_report is not None:
        report.stage = state.stage_report
    return report


def response(
    result: DecomposedPrompt,
    back: ReadBack,
    report: AssemblyReport,
    fact_sources: Mapping[str, str] | None = None,
) -> ContextResponse:
    """The response; ``fact_sources`` maps each fact shown to its turn (``included_ids``
    lists the turns of the facts section, once each)."""
    included: dict[str, list[str]] = {key: [] for key in SECTION_KEYS}
    for section, items in back.present.items():
        if section == FACTS_SECTION:
            sources = fact_sources or {}
            included[section] = list(dict.fromkeys(sources[i.id] for i in items))
        elif section != "stage_summaries":  # summaries are not memories (see included_stages)
            included[section] = [i.id for i in items]
    return ContextResponse(
        sections=back.sections, prompt=result.prompt, report=report, included_ids=included
    )
