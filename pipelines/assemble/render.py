"""From chosen items to the prompt: the template, the sections' text, the decomposer, and
reading back what survived it.

The template is the caller's slots, the note that recalled records are data, the context
sections and the query (:func:`template_for`); the sections get what the content budget leaves
after the query and the caller's slots (:func:`section_budget`).  Everything goes through
:func:`~pipelines.prompt.decomposer.decompose` (priorities, condensers, safety loop,
truncation banner), and :func:`read_back` finds which items are still in each section.

The three context sections, and greedy packing for the flat-recall baseline.

The stage-aware assembler composes its context as three labelled sections:

* ``## Current stage`` -- Phase 1, memories of the stage the query belongs to;
* ``## Related prior context`` -- Phase 2, memories of other stages reached
  through shared entities;
* ``## Stage summaries`` -- Phase 3, summaries of stages not covered above.

Each section is its header line, the data notice, then its items
(:mod:`pipelines.prompt.blocks`): memories as one-line records (``who: what``) under
the ``[when | stage]`` line they share, inside one ``<memories>`` data block, stage
summaries as one delimited block each.  An empty section still
says so explicitly: "nothing recalled for the current stage" is a signal the
reader can use (e.g. to abstain), unlike a silently missing section.  Section
text is what the ``memory_blocks`` condenser shortens without breaking blocks.

:func:`pack_to_budget` is the flat baseline's budgeting: items in rank order,
each kept if it still fits, otherwise skipped (a later, smaller item may still
fit), with the dropped ones reported.  The stage-aware path does *not* use it
for selection -- there selection is by count and budgeting happens at prompt
assembly (condensing, never silently dropping).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

from pipelines.assemble.config import DEFAULT_ASSEMBLY_CONFIG
from pipelines.assemble.items import Item, records_text, surviving
from pipelines.assemble.report import BudgetReport, SlotReport
from pipelines.assemble.request import FACTS_SECTION, FLAT_SECTION, QUERY_SLOT, SECTION_KEYS, Run
from pipelines.prompt.blocks import (
    DATA_NOTICE,
    MemoryRecord,
    StageSummaryRecord,
    group_records,
    parse_blocks,
    parse_records,
    record_group,
    render_records_block,
    render_summary_block,
)
from pipelines.prompt.budget import PhaseAllocation, allocate_phase_budgets
from pipelines.prompt.condensers import condense_memory_blocks
from pipelines.prompt.decomposer import DecomposedPrompt, Slot, decompose
from pipelines.prompt.template import PromptBudget, build_template, prompt_budget
from pipelines.prompt.tokens import TokenEstimator

__all__ = [
    "BLOCK_SEPARATOR",
    "KINDS",
    "SLOT_OF",
    "ContextSections",
    "FittedSections",
    "Layout",
    "PackResult",
    "ReadBack",
    "Rendering",
    "SectionKind",
    "budget_report",
    "build_sections",
    "decompose_prompt",
    "fit_sections",
    "layout",
    "pack_to_budget",
    "read_back",
    "render_memory_section",
    "render_summary_section",
    "section_text",
    "slot_reports",
    "top_up",
]


SLOT_OF = {key: key.upper() for key in (*SECTION_KEYS, FLAT_SECTION, FACTS_SECTION)}
"""Template slot of each section."""


@dataclass(frozen=True)
class Layout:
    """A prompt template for some context sections, the decomposer's budget for it, and the
    tokens the sections may use."""

    keys: list[str]
    template: str
    budget: PromptBudget
    section_budget: int


def layout(run: Run, context_keys: Sequence[str]) -> Layout:
    """The template holding ``context_keys`` between the caller's slots and the query."""
    leading = [s.key for s in run.request.slots]
    template = build_template(leading, context_keys, QUERY_SLOT, "Query", DATA_NOTICE)
    budget = prompt_budget(
        template,
        [*leading, *context_keys, QUERY_SLOT],
        run.request.context_window,
        run.config.headroom,
        run.est,
        run.config,
    )
    return Layout(list(context_keys), template, budget, section_budget(run, budget.content_budget))


def section_budget(run: Run, content_budget: int) -> int:
    """Tokens for the context sections: the content budget minus the query and the caller's
    slots (in full when at least as important as the current-stage section, else at most
    their minimum share, which the decomposer grants them anyway)."""
    cfg = run.config
    top = min(cfg.section_priorities)
    reserved = run.est.count(run.request.query)
    for slot in run.request.slots:
        tokens = run.est.count(slot.content)
        reserved += tokens if slot.priority <= top else min(tokens, cfg.min_share)
    return max(0, content_budget - reserved)


def section_text(kind: SectionKind, items: Sequence[Item], label: str | None) -> str:
    """A staged section: its header (the current stage's names the stage), then its records
    in one ``<memories>`` block, or its summary blocks; the "nothing here" note when empty."""
    header = f"{kind.header}: {label}" if label else None
    if kind is SectionKind.STAGE_SUMMARIES:
        text = render_summary_section([], notice=None, header=header)
    else:
        text = render_memory_section(kind, [], notice=None, header=header)
    if not items:
        return text
    head = text.split("\n", 1)[0]
    if kind is SectionKind.STAGE_SUMMARIES:
        return "\n".join([head, BLOCK_SEPARATOR.join(i.block for i in items)])
    return "\n".join([head, records_text(items)])


def decompose_prompt(run: Run, template: str, context_slots: Sequence[Slot]) -> DecomposedPrompt:
    """The caller's slots, the context sections and the query, decomposed into the window."""
    cfg = run.config
    slots = [Slot(s.key, s.content, s.priority, s.condenser) for s in run.request.slots]
    slots.extend(context_slots)
    slots.append(Slot(QUERY_SLOT, run.request.query, cfg.query_priority, "user_message"))
    return decompose(template, slots, run.request.context_window, cfg.headroom, run.est, cfg)


@dataclass
class Rendering:
    """What the packing step hands to rendering: the template, the context slots, each
    section's slot and chosen items, the layout the budget report shows, and each fact's
    turn."""

    template: str
    slots: list[Slot]
    slot_of: dict[str, str]
    items: dict[str, list[Item]]
    layout: Layout
    fact_sources: dict[str, str]


@dataclass(frozen=True)
class ReadBack:
    """Each section's text as it stands in the prompt, the items still in it, and the tokens
    of every slot."""

    sections: dict[str, str]
    present: dict[str, list[Item]]
    tokens: dict[str, int]


def read_back(
    run: Run,
    result: DecomposedPrompt,
    slot_of: Mapping[str, str],
    items_by_section: Mapping[str, Sequence[Item]],
) -> ReadBack:
    """Which items survived the decomposer, per section in ``slot_of`` (section -> slot)."""
    sections = {key: "" for key in SECTION_KEYS}
    present: dict[str, list[Item]] = {}
    tokens: dict[str, int] = {}
    for section, slot_key in slot_of.items():
        content = result.slot(slot_key).content
        sections[section] = content
        tokens[section] = result.slot(slot_key).final_tokens
        openings = (
            [b.opening for b in parse_blocks(content)]
            if section == "stage_summaries"
            else [r.head for r in parse_records(content)]
        )
        present[section] = surviving(items_by_section.get(section, []), openings)
    for slot in run.request.slots:
        tokens[slot.key] = result.slot(slot.key).final_tokens
    if FLAT_SECTION not in slot_of:  # a section left out of the prompt has no tokens
        for section in SECTION_KEYS:
            tokens.setdefault(section, 0)
    tokens["query"] = result.slot(QUERY_SLOT).final_tokens
    tokens["prompt"] = result.prompt_tokens
    return ReadBack(sections, present, tokens)


def budget_report(run: Run, lay: Layout, result: DecomposedPrompt) -> BudgetReport:
    """The budget quantities of ``lay`` and whether the prompt fits them."""
    budget = lay.budget
    return BudgetReport(
        context_window=run.request.context_window,
        headroom=run.config.headroom,
        ceiling=budget.ceiling,
        shell_tokens=budget.shell_tokens,
        budget=budget.budget,
        limit=budget.limit,
        content_budget=budget.content_budget,
        section_budget=lay.section_budget,
        split=list(run.config.split),
        fits=result.fits,
    )


def slot_reports(result: DecomposedPrompt) -> list[SlotReport]:
    return [SlotReport.of(s) for s in result.slots]


T = TypeVar("T")


#: Between two blocks or records: a line break (a blank line would cost a token per item for
#: nothing; every block already starts and ends on its own delimiter line).
BLOCK_SEPARATOR = "\n"


class SectionKind(Enum):
    """The three sections, with their header titles."""

    CURRENT_STAGE = "Current stage"
    RELATED_PRIOR = "Related prior context"
    STAGE_SUMMARIES = "Stage summaries"

    @property
    def header(self) -> str:
        """The markdown header line, e.g. ``## Current stage``."""
        return f"## {self.value}"


_EMPTY_NOTES = {
    SectionKind.CURRENT_STAGE: "(No memories were recalled for the current stage.)",
    SectionKind.RELATED_PRIOR: "(No related memories were found in other stages.)",
    SectionKind.STAGE_SUMMARIES: "(No summaries of other stages are available.)",
}


def _render_section(
    kind: SectionKind, blocks: Sequence[str], notice: str | None, header: str | None
) -> str:
    head = header if header is not None else kind.header
    if not blocks:
        return f"{head}\n{_EMPTY_NOTES[kind]}"
    return "\n".join([head, *([notice] if notice else []), BLOCK_SEPARATOR.join(blocks)])


def render_memory_section(
    kind: SectionKind,
    memories: Sequence[MemoryRecord],
    notice: str | None = DATA_NOTICE,
    header: str | None = None,
) -> str:
    """One section of memory records in a ``<memories>`` block: records that share a
    ``[when | stage]`` together under it, groups in the order of their best-ranked record,
    rank order inside a group (:func:`~pipelines.prompt.blocks.group_records`).

    ``notice`` (default :data:`~pipelines.prompt.blocks.DATA_NOTICE`) follows the header;
    ``None`` leaves it out (when the prompt states it once for all sections).  ``header``
    replaces ``kind.header``; it must be a single line starting with ``## `` (stored content
    can never start a line with ``#`` once escaped, so headers stay unforgeable).
    """
    if kind is SectionKind.STAGE_SUMMARIES:
        raise ValueError("use render_summary_section for stage summaries")
    _check_header(header)
    grouped = group_records(memories, record_group)
    return _render_section(kind, [render_records_block(grouped)] if grouped else [], notice, header)


def render_summary_section(
    summaries: Sequence[StageSummaryRecord],
    notice: str | None = DATA_NOTICE,
    header: str | None = None,
) -> str:
    """The stage-summaries section (order preserved: nearest stage first)."""
    _check_header(header)
    return _render_section(
        SectionKind.STAGE_SUMMARIES, [render_summary_block(s) for s in summaries], notice, header
    )


def _check_header(header: str | None) -> None:
    if header is not None and (not header.startswith("## ") or "\n" in header):
        raise ValueError("a section header is one line starting with '## '")


@dataclass(frozen=True, slots=True)
class ContextSections:
    """The rendered text of the three sections."""

    current_stage: str
    related_prior: str
    stage_summaries: str

    def as_text(self) -> str:
        """All three sections, separated by blank lines, in phase order."""
        return "\n\n".join([self.current_stage, self.related_prior, self.stage_summaries])


def build_sections(
    current: Sequence[MemoryRecord],
    related: Sequence[MemoryRecord],
    summaries: Sequence[StageSummaryRecord],
) -> ContextSections:
    """Render the three sections from the phases' item lists."""
    return ContextSections(
        current_stage=render_memory_section(SectionKind.CURRENT_STAGE, current),
        related_prior=render_memory_section(SectionKind.RELATED_PRIOR, related),
        stage_summaries=render_summary_section(summaries),
    )


@dataclass(frozen=True, slots=True)
class FittedSections:
    """Outcome of :func:`fit_sections`."""

    sections: ContextSections
    """Each section condensed to its granted phase budget."""
    original_tokens: tuple[int, int, int]
    """Section sizes before fitting -- pass them as ``Slot.upstream_tokens``."""
    allocation: PhaseAllocation


def fit_sections(
    sections: ContextSections,
    budget: int,
    estimator: TokenEstimator,
    split: Sequence[float] = DEFAULT_ASSEMBLY_CONFIG.split,
) -> FittedSections:
    """Fit the three sections into ``budget`` tokens following the phase split.

    Each section's demand is its current size; the budget is shared by
    :func:`~pipelines.prompt.budget.allocate_phase_budgets` (split, then
    unused budget flows on and back) and every section is condensed to its
    grant with the ``memory_blocks`` condenser (records stay whole-delimited;
    contents shrink first).  Hand the result to the decomposer with
    ``Slot(..., upstream_tokens=original_tokens[i])`` so its truncation banner
    still reports these cuts.
    """
    texts = (sections.current_stage, sections.related_prior, sections.stage_summaries)
    demands = tuple(estimator.count(text) for text in texts)
    allocation = allocate_phase_budgets(max(budget, 0), demands, split)
    fitted = [
        condense_memory_blocks(text, granted, estimator)
        for text, granted in zip(texts, allocation.granted, strict=True)
    ]
    return FittedSections(
        sections=ContextSections(fitted[0], fitted[1], fitted[2]),
        original_tokens=(demands[0], demands[1], demands[2]),
        allocation=allocation,
    )


@dataclass(frozen=True, slots=True)
class PackResult(Generic[T]):
    """Outcome of :func:`pack_to_budget`."""

    kept: tuple[T, ...]
    """Items that fit, in rank order."""
    dropped: tuple[T, ...]
    """Items skipped because they no longer fit, in rank order."""
    used_tokens: int


def pack_to_budget(
    items_with_tokens: Sequence[tuple[T, int]],
    budget: int,
    groups: Sequence[tuple[Hashable, int]] | None = None,
) -> PackResult[T]:
    """Greedy first-fit in rank order: keep an item if its tokens still fit.

    Items that do not fit are skipped, not ending the scan, so a smaller
    lower-ranked item can still use the room.  ``groups`` (one ``(key, tokens)`` per item)
    charges a group's tokens (a shared ``[when | stage]`` line) once, with the first item of
    the group that is kept.  ``used_tokens <= max(budget, 0)``.  Raises ``ValueError`` for
    negative token counts or a ``groups`` of another length.
    """
    if groups is not None and len(groups) != len(items_with_tokens):
        raise ValueError("groups must give one (key, tokens) per item")
    kept: list[T] = []
    dropped: list[T] = []
    opened: set[Hashable] = set()
    used = 0
    for n, (item, tokens) in enumerate(items_with_tokens):
        key, group_tokens = groups[n] if groups is not None else (None, 0)
        if tokens < 0 or group_tokens < 0:
            raise ValueError("token counts must be non-negative")
        cost = tokens + (group_tokens if groups is not None and key not in opened else 0)
        if used + cost <= budget:
            kept.append(item)
            used += cost
            opened.add(key)
        else:
            dropped.append(item)
    return PackResult(kept=tuple(kept), dropped=tuple(dropped), used_tokens=used)


def top_up(count: int, kept: Sequence[int], fits: Callable[[list[int]], bool]) -> list[int]:
    """``kept`` (indices into a ranked list of ``count`` items) plus every further item, in
    rank order, whose addition still ``fits`` (a check of the whole selection, e.g. the
    rendered section's exact token count); returned sorted.

    Additive packing (:func:`pack_to_budget`) charges each item its own estimate, and every
    estimate rounds up, so the rendered whole usually counts a few tokens less than the sum;
    this spends them.  Items are only ever added, and only while ``fits`` holds.
    """
    chosen = sorted(set(kept))
    taken = set(chosen)
    for n in range(count):
        if n in taken:
            continue
        candidate = sorted([*chosen, n])
        if fits(candidate):
            chosen = candidate
            taken.add(n)
    return chosen


KINDS = (SectionKind.CURRENT_STAGE, SectionKind.RELATED_PRIOR, SectionKind.STAGE_SUMMARIES)
"""The staged sections' kinds, in phase order."""
