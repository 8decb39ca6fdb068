"""From the decomposed prompt to the response: each phase's report with its counts, the
typed report of the whole assembly, and the memory ids each section kept."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pipelines.assemble.decomposer import DecomposedPrompt
from pipelines.assemble.items import Item
from pipelines.assemble.mode import ModeChoice
from pipelines.assemble.packing import Packed
from pipelines.assemble.render import Layout, ReadBack, budget_report, slot_reports
from pipelines.assemble.report import (
    AssemblyReport,
    BudgetReport,
    CurrentStagePhase,
    ItemReport,
    PhaseCounts,
    PhasesReport,
    RelatedFacts,
    RelatedPriorPhase,
    StageReport,
    SummariesFacts,
    SummariesPhase,
    Validity,
)
from pipelines.assemble.request import FACTS_SECTION, SECTION_KEYS
from pipelines.assemble.run import Run

__all__ = ["ContextResponse", "assembly_report", "response", "staged_budget", "staged_phases"]


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


def staged_phases(
    run: Run,
    phases: Sequence[Sequence[Item]],
    packed: Packed,
    back: ReadBack,
    minimums: Sequence[int],
    shares: Sequence[int],
    facts: tuple[RelatedFacts, SummariesFacts],
) -> PhasesReport:
    """The three phases' reports: how each ranked its candidates, and what planning and the
    decomposer kept of them."""
    n, mins = packed.counts, minimums
    facts2, facts3 = facts
    present = back.present
    current = CurrentStagePhase(
        candidates=len(phases[0]),
        selection="score" if run.ablated("selection") else "mmr",
        **dict(_counts(run, phases[0], n[0], mins[0], shares[0], len(present["current_stage"]))),
    )
    related = RelatedPriorPhase(
        **dict(facts2),
        **dict(_counts(run, phases[1], n[1], mins[1], shares[1], len(present["related_prior"]))),
    )
    shown = present.get("stage_summaries", [])
    summaries = SummariesPhase(
        **dict(facts3),
        **dict(_counts(run, phases[2], n[2], mins[2], shares[2], len(shown))),
        included_stages=[i.id for i in shown],
    )
    if not packed.with_summaries:
        summaries.section = "left out: no summary selected"
    return PhasesReport(current_stage=current, related_prior=related, stage_summaries=summaries)


def staged_budget(
    run: Run, lay: Layout, result: DecomposedPrompt, split: Sequence[float], packed: Packed
) -> BudgetReport:
    """The budget quantities with the split the current stage earned and the plan's shares,
    planned tokens and grants."""
    budget = budget_report(run, lay, result)
    budget.effective_split = [round(x, 4) for x in split]
    budget.phase_shares = list(packed.plan.shares)
    budget.phase_planned_tokens = list(packed.plan.tokens)
    budget.phase_granted = list(packed.fitted.allocation.granted)
    return budget


def assembly_report(
    run: Run,
    mode: ModeChoice,
    stage: StageReport | None,
    result: DecomposedPrompt,
    back: ReadBack,
    budget: BudgetReport,
    phases: PhasesReport,
) -> AssemblyReport:
    report = AssemblyReport(
        validity=Validity(
            include_superseded=run.request.include_superseded,
            as_of=run.as_of.isoformat() if run.as_of else None,
            known_at=run.known_at.isoformat() if run.known_at else None,
        ),
        ablate=sorted(run.experiment.ablate),
        mode=mode.mode,
        mode_reason=mode.reason,
        density=mode.density,
        total_tokens=result.prompt_tokens,
        tokens=back.tokens,
        budget=budget,
        phases=phases,
        slots=slot_reports(result),
        retention={s.key: round(s.retention, 4) for s in result.slots},
        condensers={s.key: s.condenser for s in result.slots if s.condenser is not None},
        warning=result.warning,
        fast_path=result.fast_path,
        safety_iterations=result.safety_iterations,
        timings_ms=run.clock.total(),
    )
    if stage is not None:
        report.stage = stage
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
