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

Staged mode's sections with the facts tier, packed and rendered.

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.items import Item, costs, display_order, grouped
from pipelines.assemble.recalls import Fact, choose_for_share, fact_section, facts_text
from pipelines.assemble.render import (
    KINDS,
    SLOT_OF,
    ContextSections,
    FittedSections,
    Layout,
    Rendering,
    fit_sections,
    layout,
    section_text,
)
from pipelines.assemble.request import FACTS_SECTION, SECTION_KEYS, Run
from pipelines.prompt.budget import split_budget
from pipelines.prompt.decomposer import Slot
from pipelines.prompt.tokens import TokenEstimator

__all__ = [
    "Packed",
    "PhasePlan",
    "Phases",
    "StagedPack",
    "extend_prefixes",
    "minimum_count",
    "pack_phases",
    "pack_staged",
    "plan_phase_counts",
    "seed_count",
    "staged_rendering",
]


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


@dataclass(frozen=True)
class Phases:
    """The three phases' ranked candidates, the current stage's label, the split and the
    minimum counts they are packed by, and whether their records read in time order."""

    items: Sequence[Sequence[Item]]
    label: str | None
    split: Sequence[float]
    minimums: Sequence[int]
    time_order: bool


def pack_staged(run: Run, lay: Layout, phases: Phases, facts: Sequence[Fact]) -> StagedPack:
    """The three phases' ranked candidates packed into ``lay``'s sections, and ``facts`` (best
    first) in a section before them for the turns the phases leave out."""
    time_order = phases.time_order

    def pack(budget: int) -> Packed:
        return pack_phases(
            run.est,
            phases.items,
            phases.label,
            phases.split,
            phases.minimums,
            max(0, budget),
            time_order,
        )

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


@dataclass(frozen=True, slots=True)
class PhasePlan:
    """Outcome of :func:`plan_phase_counts`."""

    counts: tuple[int, ...]
    """Items taken from the head of each phase's ranked list."""
    tokens: tuple[int, ...]
    """Tokens of the items taken, per phase."""
    shares: tuple[int, ...]
    """Each phase's share of the budget by the split."""
    unused: int
    """Budget left after all phases (``0`` whenever an item was left out for lack of room)."""


def plan_phase_counts(
    item_tokens: Sequence[Sequence[int]],
    budget: int,
    split: Sequence[float],
    min_counts: Sequence[int],
) -> PhasePlan:
    """How many items of each phase's ranked list go into the context.

    1. Every phase takes its first ``min_counts[i]`` items (or all it has), whatever they cost:
       selection is by count, so a few long items never shrink it (the decomposer condenses
       later if the minimums alone overflow).
    2. Each phase then extends its prefix while the next item fits in its share of ``budget``
       (largest-remainder split by ``split``) and in what is left of the whole budget.
    3. What is left of the whole budget goes to the phases in order (phase 1 first), each
       extending its prefix while the next item fits.

    Items are always a prefix of each ranked list (rank order is never skipped over).
    Invariants: ``counts[i] >= min(min_counts[i], len(item_tokens[i]))``; when no phase
    exceeds its minimum, ``sum(tokens) <= max(budget, sum of the minimums' tokens)``.
    """
    n = len(item_tokens)
    if len(min_counts) != n or len(split) != n:
        raise ValueError("item_tokens, split and min_counts must have the same length")
    if n != 3:
        raise ValueError("there are exactly three phases")
    if any(t < 0 for items in item_tokens for t in items) or any(c < 0 for c in min_counts):
        raise ValueError("token counts and minimum counts must be non-negative")
    total = max(budget, 0)
    shares = split_budget(total, split)
    counts = [min(min_counts[i], len(item_tokens[i])) for i in range(n)]
    used = [sum(item_tokens[i][: counts[i]]) for i in range(n)]
    left = total - sum(used)  # may be negative when the minimums overflow
    for i in range(n):
        while counts[i] < len(item_tokens[i]):
            cost = item_tokens[i][counts[i]]
            if used[i] + cost > shares[i] or cost > left:
                break
            used[i] += cost
            left -= cost
            counts[i] += 1
    for i in range(n):
        while counts[i] < len(item_tokens[i]) and item_tokens[i][counts[i]] <= left:
            left -= item_tokens[i][counts[i]]
            used[i] += item_tokens[i][counts[i]]
            counts[i] += 1
    return PhasePlan(tuple(counts), tuple(used), tuple(shares), max(left, 0))


def extend_prefixes(
    counts: Sequence[int],
    lengths: Sequence[int],
    fits: Callable[[list[int]], bool],
    phases: Sequence[int] | None = None,
) -> list[int]:
    """``counts`` (prefix lengths of ranked lists of ``lengths``) with each of ``phases`` (all,
    in order, by default) extended one item at a time while ``fits`` holds for the counts so
    far: the plan's leftover step, checked on the whole (e.g. the rendered sections' exact
    token count) instead of on per-item estimates that each round up.  Prefixes only grow,
    and a phase stops at its first item that does not fit."""
    if len(counts) != len(lengths):
        raise ValueError("counts and lengths must have the same length")
    out = list(counts)
    for n in range(len(out)) if phases is None else phases:
        while out[n] < lengths[n]:
            trial = [c + 1 if m == n else c for m, c in enumerate(out)]
            if not fits(trial):
                break
            out = trial
    return out
