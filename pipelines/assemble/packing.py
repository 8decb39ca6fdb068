"""Staged mode's packing: how many of each phase's ranked candidates go into the budget.

Each phase takes at least its minimum count, then what fits its share of the budget (60/30/10
by default), then whatever is left, most important phase first
(:func:`~pipelines.assemble.plan.plan_phase_counts`).  The plan charges each ``[when | stage]``
line to the first record of its group (:func:`~pipelines.assemble.items.costs`) and adds up
per-item estimates, each rounded up; what the sections as rendered leave of the budget then
takes further items in rank order (:func:`~pipelines.assemble.plan.extend_prefixes`).  A
summaries section with no summary selected is left out, and its header is room for memories.
Finally each section is fitted to its grant of the budget
(:func:`~pipelines.assemble.sections.fit_sections`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.items import Item, costs, display_order, grouped
from pipelines.assemble.plan import PhasePlan, extend_prefixes, plan_phase_counts
from pipelines.assemble.render import KINDS, section_text
from pipelines.assemble.sections import ContextSections, FittedSections, fit_sections
from pipelines.assemble.tokens import TokenEstimator

__all__ = ["Packed", "minimum_count", "pack_phases", "seed_count"]


def minimum_count(config: AssemblyConfig, share: int) -> int:
    """Minimum item count of a phase: ``max_chunks_per_phase``, but no more than its share
    holds at the *expected* item size (so tiny budgets are not overrun by design; long items
    never reduce the count)."""
    return min(config.max_chunks_per_phase, max(1, share // config.expected_item_tokens))


def seed_count(phase1: Sequence[Item], share: int, minimum: int) -> int:
    """How many of Phase 1's ranked items its own share holds: the memories that seed
    Phase 2's walk (the selection before the whole budget is planned)."""
    return plan_phase_counts(
        [costs(phase1), [], []], share, (1.0, 0.0, 0.0), (minimum, 0, 0)
    ).counts[0]


@dataclass(frozen=True)
class Packed:
    """The plan, the counts taken from each phase (after the top-up), the chosen items of
    each section in display order, and the sections fitted to the budget."""

    plan: PhasePlan
    counts: list[int]
    with_summaries: bool
    chosen: list[list[Item]]
    fitted: FittedSections


def pack_phases(
    est: TokenEstimator,
    phases: Sequence[Sequence[Item]],
    label: str | None,
    split: Sequence[float],
    minimums: Sequence[int],
    section_budget: int,
    time_order: bool,
) -> Packed:
    """Plan, top up, order for display and fit the three phases' ranked candidates."""
    frames = [  # headers (or the "nothing here" notes), at most, outside the items
        est.count(section_text(kind, [], label if n == 0 else None)) + 1
        for n, kind in enumerate(KINDS)
    ]
    tokens = [costs(items) for items in phases]
    plan = plan_phase_counts(tokens, max(0, section_budget - sum(frames)), split, minimums)
    if plan.counts[2] == 0:
        # No summary goes in: the section is left out, and its header and note are room
        # for memories (kept only if the summaries still get nothing with that room).
        roomier = plan_phase_counts(
            tokens, max(0, section_budget - sum(frames[:2])), split, minimums
        )
        plan = roomier if roomier.counts[2] == 0 else plan
    with_summaries = plan.counts[2] > 0
    counts = _top_up(est, phases, plan.counts, label, with_summaries, section_budget)
    chosen = [
        grouped(display_order(items[:n], time_order) if n_phase < 2 else items[:n])
        for n_phase, (items, n) in enumerate(zip(phases, counts, strict=True))
    ]
    sections = ContextSections(
        section_text(KINDS[0], chosen[0], label),
        section_text(KINDS[1], chosen[1], None),
        section_text(KINDS[2], chosen[2], None) if with_summaries else "",
    )
    fitted = fit_sections(sections, section_budget, est, split)
    return Packed(plan, counts, with_summaries, chosen, fitted)


def _top_up(
    est: TokenEstimator,
    phases: Sequence[Sequence[Item]],
    planned: Sequence[int],
    label: str | None,
    with_summaries: bool,
    section_budget: int,
) -> list[int]:
    """The plan's counts, with the memory phases' prefixes extended (most important phase
    first, as the plan's leftover step does) while the sections *as rendered* still fit
    ``section_budget``."""
    kinds = KINDS if with_summaries else KINDS[:2]

    def fits(trial: Sequence[int]) -> bool:
        used = sum(
            est.count(section_text(kind, phases[n][: trial[n]], label if n == 0 else None))
            for n, kind in enumerate(kinds)
        )
        return used <= section_budget

    return extend_prefixes(planned, [len(p) for p in phases], fits, phases=(0, 1))
