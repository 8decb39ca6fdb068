"""From chosen items to the prompt: the template, the sections' text, the decomposer, and
reading back what survived it.

The template is the caller's slots, the note that recalled records are data, the context
sections and the query (:func:`template_for`); the sections get what the content budget leaves
after the query and the caller's slots (:func:`section_budget`).  Everything goes through
:func:`~pipelines.assemble.decomposer.decompose` (priorities, condensers, safety loop,
truncation banner), and :func:`read_back` finds which items are still in each section.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pipelines.assemble.blocks import DATA_NOTICE, parse_blocks, parse_records
from pipelines.assemble.decomposer import DecomposedPrompt, Slot, decompose
from pipelines.assemble.items import Item, records_text, surviving
from pipelines.assemble.plan import PromptBudget, build_template, prompt_budget
from pipelines.assemble.report import BudgetReport, SlotReport
from pipelines.assemble.request import FACTS_SECTION, FLAT_SECTION, QUERY_SLOT, SECTION_KEYS
from pipelines.assemble.run import Run
from pipelines.assemble.sections import (
    BLOCK_SEPARATOR,
    SectionKind,
    render_memory_section,
    render_summary_section,
)

__all__ = [
    "KINDS",
    "SLOT_OF",
    "Layout",
    "ReadBack",
    "Rendering",
    "budget_report",
    "decompose_prompt",
    "layout",
    "read_back",
    "section_text",
    "slot_reports",
]

SLOT_OF = {key: key.upper() for key in (*SECTION_KEYS, FLAT_SECTION, FACTS_SECTION)}
"""Template slot of each section."""
KINDS = (SectionKind.CURRENT_STAGE, SectionKind.RELATED_PRIOR, SectionKind.STAGE_SUMMARIES)
"""The staged sections' kinds, in phase order."""


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
    return [
        SlotReport(
            key=s.key,
            priority=s.priority,
            original_tokens=s.original_tokens,
            input_tokens=s.input_tokens,
            final_tokens=s.final_tokens,
            retention=round(s.retention, 4),
            share=s.share,
            condenser=s.condenser,
        )
        for s in result.slots
    ]
