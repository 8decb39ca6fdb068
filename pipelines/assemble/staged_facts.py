"""Staged mode's sections with the facts tier, packed and rendered.

The facts (:mod:`pipelines.assemble.facts`) take up to ``facts_share`` of the sections' budget
in a ``## Facts`` section before the three phases' sections, but never the room the phases'
minimum counts need whole (a budget those fill leaves the facts out, rather than cutting the
phases' sections to make room for them). The phases are packed
(:func:`~pipelines.assemble.packing.pack_phases`, with their split and minimum counts) into
what the share leaves; the facts of the turns the packed phases do not show are chosen, the
section's frame charged first; then the phases are packed again into what the chosen facts
leave, unless that is less than a compact record more. Facts whose turn the phases then show
are dropped; when none is left, the sections are packed and rendered as without the tier.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pipelines.assemble.decomposer import Slot
from pipelines.assemble.facts import Fact, choose_for_share, fact_section, facts_text
from pipelines.assemble.items import Item
from pipelines.assemble.packing import Packed, pack_phases
from pipelines.assemble.render import SLOT_OF, Layout, Rendering, layout
from pipelines.assemble.request import FACTS_SECTION, SECTION_KEYS
from pipelines.assemble.run import Run

__all__ = ["StagedPack", "pack_staged", "staged_rendering"]


@dataclass(frozen=True)
class StagedPack:
    """The layout the sections take (with the facts slot when facts are shown), the packed
    phases, the facts shown (display order), each one's turn, and the facts' share of tokens
    (0 without facts to choose from or room beside the phases' minimum counts)."""

    layout: Layout
    packed: Packed
    facts: list[Item]
    sources: dict[str, str]
    share: int


def pack_staged(
    run: Run,
    lay: Layout,
    phases: Sequence[Sequence[Item]],
    label: str | None,
    split: Sequence[float],
    minimums: Sequence[int],
    time_order: bool,
    facts: Sequence[Fact],
) -> StagedPack:
    """The three phases' ranked candidates packed into ``lay``'s sections, and ``facts`` (best
    first) in a section before them for the turns the phases leave out."""

    def pack(budget: int) -> Packed:
        return pack_phases(run.est, phases, label, split, minimums, max(0, budget), time_order)

    share = 0
    if facts:
        with_facts = layout(run, [SLOT_OF[FACTS_SECTION], *lay.keys])
        budget = with_facts.section_budget
        least = sum(pack(0).fitted.original_tokens)  # the minimum counts' sections, whole
        share = max(0, min(int(budget * run.config.facts_share), budget - least - 1))
        packed = pack(budget - share)
        chosen, used = choose_for_share(run, facts, _shown(packed), share, time_order)
        if chosen and share - used - 1 >= run.config.compact_record_tokens:
            packed = pack(budget - used - 1)  # room enough for another record
        shown = _shown(packed)
        kept = [f for f in chosen if f.source_id not in shown]
        if kept:
            items = fact_section(run, kept, time_order)
            return StagedPack(with_facts, packed, items, {f.id: f.source_id for f in kept}, share)
    return StagedPack(lay, pack(lay.section_budget), [], {}, share)


def _shown(packed: Packed) -> set[str]:
    """The memories the packed phases show (the summaries' items are stages)."""
    return {i.id for items in packed.chosen[:2] for i in items}


def staged_rendering(run: Run, pack: StagedPack) -> Rendering:
    """The facts (when any) and the fitted sections (the summaries' left out when it holds
    none) as the decomposer's slots."""
    cfg = run.config
    packed = pack.packed
    sections = packed.fitted.sections
    texts = (sections.current_stage, sections.related_prior, sections.stage_summaries)
    names = list(SECTION_KEYS if packed.with_summaries else SECTION_KEYS[:2])
    slots = [
        Slot(
            SLOT_OF[name],
            text,
            cfg.section_priorities[i],
            "memory_blocks",
            upstream_tokens=packed.fitted.original_tokens[i],
        )
        for i, (name, text) in enumerate(zip(names, texts, strict=False))
    ]
    chosen: dict[str, list[Item]] = dict(zip(SECTION_KEYS, packed.chosen, strict=True))
    if pack.facts:
        names.insert(0, FACTS_SECTION)
        text = facts_text(pack.facts)
        slots.insert(
            0, Slot(SLOT_OF[FACTS_SECTION], text, cfg.section_priorities[1], "memory_blocks")
        )
        chosen[FACTS_SECTION] = pack.facts
    keys = [SLOT_OF[name] for name in names]
    # Without summaries the template loses that slot; the budget stays the layout's.
    template = pack.layout.template if keys == pack.layout.keys else layout(run, keys).template
    slot_of = {name: SLOT_OF[name] for name in names}
    return Rendering(template, slots, slot_of, chosen, pack.layout, pack.sources)
