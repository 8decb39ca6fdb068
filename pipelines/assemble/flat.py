"""Flat mode: whole-space recall packed first-fit into the budget, as one section.

Chosen when no stage should scope the context (a gate, see :mod:`pipelines.assemble.mode`).
Recall asks ``flat_pool_factor`` times as many memories as the room holds at the expected
item size, so first-fit packing can fill what a long memory leaves with shorter ones further
down; the packing adds up per-record estimates, each rounded up, so what the section as
rendered still leaves takes further candidates in rank order. When the recalled memories do
not all fit whole, the best ranked fill ``1 - compact_share`` of the room whole and the
memories after them show their best matching sentence (:mod:`pipelines.assemble.compact`).
When recalled memories are left out, a line after the records says how many. Stage summaries,
when the caller passes them (a question asking for a summary), take their room first and come
in a section of their own after the records. Facts (:mod:`pipelines.assemble.facts`), when the
caller passes them, take up to ``facts_share`` of the room in a section before the records:
the records are packed into what that leaves, the facts of turns not shown chosen, and the
records packed again into what the chosen facts leave.

A memory's compact form (pure): the sentence of it that best matches the query, cut to a
token cap and marked as an excerpt, for memories that rank below what fits whole.

A context of a few whole records says much about a few memories; compact records say the
point of many more. The sentence is the one holding the most of the query's keywords (the
earliest on a tie, so a memory without any shows how it starts); a long memory's sentence is
taken from the chunk recall matched. A memory no longer than the cap stays whole.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from pipelines.assemble.items import (
    Evidence,
    Item,
    costs,
    display_order,
    grouped,
    memory_item,
    records_text,
    retime,
    with_content,
)
from pipelines.assemble.recalls import (
    Fact,
    SpaceRecall,
    choose_for_share,
    fact_section,
    facts_text,
    space_recall,
)
from pipelines.assemble.render import (
    SLOT_OF,
    Layout,
    SectionKind,
    layout,
    pack_to_budget,
    section_text,
    top_up,
)
from pipelines.assemble.report import FlatPhase, ItemReport
from pipelines.assemble.request import FACTS_SECTION, FLAT_SECTION, Run
from pipelines.ingest.condense import informative_sentence
from pipelines.ingest.text import split_sentences
from pipelines.prompt.blocks import RECORDS_TAG
from pipelines.prompt.decomposer import Slot
from pipelines.prompt.tokens import TokenEstimator
from pipelines.recall.intent import Intent
from pipelines.recall.query import extract_keywords
from pipelines.recall.request import MAX_K, ChunkSpan
from pipelines.recall.service import RecallHit

__all__ = [
    "ELLIPSIS",
    "SUMMARIES_SECTION",
    "FlatContext",
    "compact_text",
    "flat_context",
    "flat_k",
    "flat_layout",
    "flat_recall",
    "left_out_note",
    "query_terms",
]


SUMMARIES_SECTION = "stage_summaries"


_HEADER = "## Recalled memories"


_EMPTY = "(No memories were recalled.)"


def left_out_note(count: int) -> str:
    """The line after the records that says how many recalled memories did not fit."""
    noun = "memory" if count == 1 else "memories"
    return f"[… {count} more recalled {noun} left out to fit the context budget]"


def flat_layout(run: Run) -> Layout:
    return layout(run, [SLOT_OF[FLAT_SECTION]])


def _room(run: Run, lay: Layout) -> int:
    """What the records may use: the section budget less the header."""
    header = max(
        run.est.count(f"{_HEADER}\n{_EMPTY}"),
        run.est.count(f"{_HEADER}\n<{RECORDS_TAG}>\n</{RECORDS_TAG}>"),
    )
    return max(0, lay.section_budget - header)


def flat_k(run: Run, lay: Layout | None = None) -> int:
    """How many memories flat mode recalls: ``flat_pool_factor`` times what its room holds
    at the expected item size, at most recall's ``max_k``."""
    cfg = run.config
    room = _room(run, lay or flat_layout(run))
    wanted = max(
        cfg.max_chunks_per_phase,
        math.ceil(room / cfg.expected_item_tokens * cfg.flat_pool_factor),
    )
    return min(MAX_K, wanted)


def compact_share(run: Run, recalled: SpaceRecall) -> float:
    """The share of the room for compact records: ``coverage_compact_share`` for a question
    that asks for an order or a summary (its answer is spread over the history), else
    ``compact_share``."""
    cfg = run.config
    return cfg.coverage_compact_share if recalled.intent in _COVERAGE else cfg.compact_share


_COVERAGE = {str(Intent.EVENT_ORDER), str(Intent.SUMMARIZATION)}


def _tiered(
    run: Run, hits: Sequence[RecallHit], items: list[Item], room: int, share: float
) -> tuple[list[Item], set[int]]:
    """The candidates in rank order: whole records for the best ranked that fit
    ``1 - share`` of ``room``, compact ones after them (all whole when they all fit);
    and the positions shown compact."""
    cfg = run.config
    if share <= 0.0 or sum(costs(items)) <= room:
        return items, set()
    sizes = [(n, i.tokens) for n, i in enumerate(items)]
    groups = [(i.group, i.group_tokens) for i in items]
    whole = set(pack_to_budget(sizes, int(room * (1.0 - share)), groups).kept)
    terms = query_terms(extract_keywords(run.request.query))
    out: list[Item] = []
    compacted: set[int] = set()
    for n, (item, hit) in enumerate(zip(items, hits, strict=True)):
        text = None
        if n not in whole:
            text = compact_text(hit.content, hit.chunks, terms, cfg.compact_record_tokens, run.est)
        if text is None:
            out.append(item)
        else:
            out.append(with_content(item, text, run.est))
            compacted.add(n)
    return out, compacted


@dataclass(frozen=True)
class FlatContext:
    """The flat sections ready for the decomposer: the layout, the records kept (display
    order), the facts kept (their items, and each one's turn), the context slots, the phase
    report without its ``included`` count, and the tokens the facts could take (0 when no
    fact was offered)."""

    layout: Layout
    kept: list[Item]
    facts: list[Item]
    fact_sources: dict[str, str]
    slots: list[Slot]
    phase: FlatPhase
    facts_share: int = 0


def flat_recall(run: Run, recalled: SpaceRecall | None = None) -> tuple[SpaceRecall, bool]:
    """Flat mode's whole-space recall, and whether it is ``recalled``: a recall already made
    (by staged mode before a gate chose flat mode), used when it was made with flat mode's k,
    which makes it the very recall flat mode would make."""
    k = flat_k(run)
    reused = recalled is not None and recalled.k == k
    if recalled is None or not reused:
        recalled = space_recall(run, k)
    return recalled, reused


@dataclass(frozen=True)
class _Records:
    """The records packed into some room: the candidates (some compact), the positions
    chosen, those shown compact, and the section's text."""

    items: list[Item]
    chosen: list[int]
    compacted: set[int]
    text: str

    def ids(self) -> set[str]:
        return {self.items[n].id for n in self.chosen}


def _records(
    run: Run, recalled: SpaceRecall, candidates: list[Item], room: int, budget: int
) -> _Records:
    """The records of ``candidates`` (rank order) that ``room`` holds, topped up while the
    section's text fits ``budget``."""
    items, compacted = _tiered(run, recalled.hits, candidates, room, compact_share(run, recalled))
    sizes = [(n, i.tokens) for n, i in enumerate(items)]
    groups = [(i.group, i.group_tokens) for i in items]
    packed = pack_to_budget(sizes, room, groups)
    if len(packed.kept) < len(items):  # room for the line that says how many were left out
        note = run.est.count(left_out_note(len(items))) + 1
        packed = pack_to_budget(sizes, max(0, room - note), groups)

    def records_of(chosen: Sequence[int]) -> list[Item]:
        return display_order([items[n] for n in sorted(chosen)], recalled.time_order)

    def text_of(chosen: Sequence[int]) -> str:
        if not chosen:
            return f"{_HEADER}\n{left_out_note(len(items)) if items else _EMPTY}"
        lines = [_HEADER, records_text(records_of(chosen))]
        if len(chosen) < len(items):
            lines.append(left_out_note(len(items) - len(chosen)))
        return "\n".join(lines)

    chosen = top_up(
        len(items),
        packed.kept,
        lambda picked: run.est.count(text_of(picked)) <= budget,
    )
    return _Records(items, sorted(chosen), compacted, text_of(chosen))


def _with_facts(
    run: Run, recalled: SpaceRecall, candidates: list[Item], facts: Sequence[Fact], lay: Layout
) -> tuple[_Records, list[Item], dict[str, str], int]:
    """Records and facts in ``lay``'s room (facts first, up to ``facts_share``; the last value
    is that share in tokens): the records
    packed into what the share leaves, the facts of the turns they do not show, then the
    records packed again into what those facts leave (facts whose turn they then show are
    dropped). The second packing is skipped when the facts leave less than a compact record."""
    cfg = run.config
    room, budget = _room(run, lay), lay.section_budget
    share = int(room * cfg.facts_share)
    first = _records(run, recalled, candidates, room - share, budget - share)
    chosen, used = choose_for_share(run, facts, first.ids(), share, recalled.time_order)
    records = first
    if share - used - 1 >= cfg.compact_record_tokens:  # room enough for another record
        records = _records(run, recalled, candidates, room - used - 1, budget - used - 1)
    shown = records.ids()
    kept = [f for f in chosen if f.source_id not in shown]
    items = fact_section(run, kept, recalled.time_order)
    return records, items, {f.id: f.source_id for f in kept}, share


def flat_context(
    run: Run,
    recalled: SpaceRecall,
    reused: bool,
    summaries: Sequence[Item] = (),
    facts: Sequence[Fact] = (),
) -> FlatContext:
    """Whole-space recall packed into the budget as the decomposer's slots; ``summaries``
    (stage summary blocks) come in a section of their own after the records, their room taken
    first; ``facts`` (best first) in one before them, when some turn the records leave out
    has one."""
    cfg = run.config
    keys = [SLOT_OF[FLAT_SECTION]] + ([SLOT_OF[SUMMARIES_SECTION]] if summaries else [])
    summary_text = section_text(SectionKind.STAGE_SUMMARIES, summaries, None) if summaries else ""
    summary_tokens = run.est.count(summary_text)
    candidates = [
        memory_item(
            h,
            Evidence(rank=n + 1),
            run.est,
            with_stage=cfg.flat_stage_provenance,
            chunks_shown=cfg.long_memory_chunks,
        )
        for n, h in enumerate(recalled.hits)
    ]
    retime(cfg.record_time_precision, run.est, candidates)
    fact_list: list[Item] = []
    sources: dict[str, str] = {}
    records: _Records | None = None
    share = 0
    if facts:
        lay = layout(run, [SLOT_OF[FACTS_SECTION], *keys])
        fit = _less(lay, summary_tokens)
        records, fact_list, sources, share = _with_facts(run, recalled, candidates, facts, fit)
        if not fact_list:
            records = None
    if records is None:
        lay = layout(run, keys)
        fit = _less(lay, summary_tokens)
        records = _records(run, recalled, candidates, _room(run, fit), fit.section_budget)
    items, chosen = records.items, records.chosen
    kept = grouped(display_order([items[n] for n in chosen], recalled.time_order))
    slots = _slots(run, records.text, fact_list, summary_text)
    phase = FlatPhase(
        candidates=len(items),
        selected=len(kept),
        dropped=len(items) - len(kept),
        intent=recalled.intent,
        recall="reused whole-space recall" if reused else "recalled",
        recall_k=recalled.k,
        compact=sum(1 for n in chosen if n in records.compacted),
        included=0,
    )
    if run.explain:
        phase.items = [ItemReport(id=i.id, tokens=i.tokens, score=i.score) for i in kept]
    return FlatContext(lay, kept, fact_list, sources, slots, phase, share)


def _slots(run: Run, records: str, facts: Sequence[Item], summaries: str) -> list[Slot]:
    """The decomposer's slots of a flat context: the facts (when any), the records, the
    summaries (when any)."""
    priorities = run.config.section_priorities
    slots = [Slot(SLOT_OF[FLAT_SECTION], records, priorities[0], "memory_blocks")]
    if facts:
        text = facts_text(facts)
        slots.insert(0, Slot(SLOT_OF[FACTS_SECTION], text, priorities[1], "memory_blocks"))
    if summaries:
        slots.append(Slot(SLOT_OF[SUMMARIES_SECTION], summaries, priorities[2], "memory_blocks"))
    return slots


def _less(lay: Layout, tokens: int) -> Layout:
    """``lay`` with ``tokens`` of its section budget already taken (the stage summaries)."""
    return replace(lay, section_budget=max(0, lay.section_budget - tokens))


#: Marks where a compact record's text was cut.
ELLIPSIS = "…"


def query_terms(keywords: Sequence[str]) -> tuple[str, ...]:
    """The query's keywords, case-folded, for matching sentences."""
    return tuple(dict.fromkeys(k.casefold() for k in keywords if k.strip()))


def compact_text(
    text: str,
    spans: Sequence[ChunkSpan],
    terms: Sequence[str],
    max_tokens: int,
    est: TokenEstimator,
) -> str | None:
    """The best sentence of ``text`` for ``terms`` within ``max_tokens``, with an ellipsis
    where it was cut or where text around it was left out; None when ``text`` itself fits
    (nothing to compact). ``spans``: a long memory's matched chunks, best first."""
    if est.count(text) <= max_tokens:
        return None
    source = text[spans[0].start : spans[0].end] if spans else text
    sentences = split_sentences(source) or [source.strip()]
    best, sentence = informative_sentence(sentences, terms)
    sentence = " ".join(sentence.split())
    lead = ELLIPSIS + " " if best > 0 or spans else ""
    return _cut(lead + sentence, max_tokens, est)


def _cut(text: str, max_tokens: int, est: TokenEstimator) -> str:
    """``text`` ending in an ellipsis, cut at a word boundary to ``max_tokens``."""
    words = text[: max_tokens * 8].split(" ")  # a token holds fewer than 8 characters
    while words:
        candidate = " ".join(words) + " " + ELLIPSIS
        if est.count(candidate) <= max_tokens:
            return candidate
        words.pop()
    return ELLIPSIS
