"""Every condenser by name, and the choice of one by tags or content shape.

A condenser is a pure function ``(text, budget_tokens, estimator) -> text`` whose result fits
the budget, returns text that already fits unchanged, and holds only pieces of the input plus
elision markers.  The text condensers are in :mod:`pipelines.prompt.text_condensers`; the
``memory_blocks`` condenser is here: a section of rendered data blocks (see
:mod:`pipelines.prompt.blocks`) shortened without ever breaking a block's delimiters, or
reducing the number of records unless even their delimiters do not fit.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence

from pipelines.prompt.blocks import (
    RECORDS_TAG,
    ParsedRecord,
    dedent_continuations,
    defang_line_starts,
    indent_continuations,
    parse_blocks,
    parse_records,
    tag_start,
)
from pipelines.prompt.text_condensers import (
    ELISION,
    TEXT_CONDENSERS,
    Condenser,
    condense_assistant_message,
    condense_code_signatures,
    condense_entity_triples,
    condense_timeline,
    condense_user_message,
    text_condenser_for,
    truncate,
)
from pipelines.prompt.tokens import TokenEstimator

__all__ = [
    "CONDENSERS",
    "ELISION",
    "Condenser",
    "choose_condenser",
    "condense",
    "condense_assistant_message",
    "condense_code_signatures",
    "condense_entity_triples",
    "condense_memory_blocks",
    "condense_timeline",
    "condense_user_message",
    "truncate",
]


def _omission_note(count: int) -> str:
    noun = "record" if count == 1 else "records"
    return f"[… {count} more {noun} omitted to fit the context budget]"


def _cut_before_tags(text: str) -> str:
    """A cut of escaped text can end in what starts one of the prompt's tags ("</ma…" cut to
    "</m […]"): cut again before it."""
    at = tag_start(text)
    while at >= 0:
        head = text[:at].rstrip()
        text = f"{head} {ELISION}" if head else ""
        at = tag_start(text)
    return text


def _condense_block_content(content: str, budget: int, estimator: TokenEstimator) -> str:
    """Condense escaped block content without letting it pose as structure.

    The content-shape condenser may move a mid-line fragment to a line start,
    so its output is re-defanged; if that no longer fits, a plain truncation
    (a prefix of already escaped text, cut before any tag start the cut made) is used
    instead.
    """
    if estimator.count(content) <= budget:
        return content
    # Escaped content never parses as blocks; should it, it is truncated, never nested.
    name = "truncate" if parse_blocks(content) else text_condenser_for(content)
    condensed = _cut_before_tags(
        defang_line_starts(TEXT_CONDENSERS[name](content, budget, estimator))
    )
    if estimator.count(condensed) <= budget:
        return condensed
    return _cut_before_tags(truncate(content, budget, estimator))


def _water_fill(
    originals: Sequence[str],
    frames: tuple[Sequence[int], int],
    note_cost: Callable[[int], int],
    assemble: Callable[[int, Sequence[str]], str],
    condense_one: Callable[[str, int], str],
    budget: int,
    estimator: TokenEstimator,
) -> str | None:
    """Keep as many units as possible, then share the budget among their contents.

    ``frames``: each unit's frame tokens, and the tokens of the fixed text around them.
    Tries ``kept`` = all units, then one fewer, ...: the budget left after the fixed text, the
    kept units' frames and the omission note is water-filled from the last (least important)
    kept unit to the first; each gets ``floor(remaining / units_left)``, and a unit that needs
    less leaves the rest to earlier ones.  ``None`` when not even one unit fits.
    """
    frame_cost, fixed = frames
    for kept in range(len(originals), 0, -1):
        available = budget - fixed - sum(frame_cost[:kept]) - note_cost(kept)
        slack = 0
        while available - slack >= 0:
            remaining = available - slack
            contents = list(originals[:kept])
            for position, i in enumerate(reversed(range(kept))):
                share = remaining // (kept - position)
                contents[i] = condense_one(originals[i], share)
                remaining -= min(estimator.count(contents[i]), remaining)
            result = assemble(kept, contents)
            excess = estimator.count(result) - budget
            if excess <= 0:
                return result
            slack += excess
    return None


def _condense_record_content(content: str, budget: int, estimator: TokenEstimator) -> str:
    """Condense a memory record's content (escaped, continuation lines indented): condensed
    without its indentation, then re-indented so no line of it can start a record."""
    if estimator.count(content) <= budget:
        return content
    plain = dedent_continuations(content)
    condensed = indent_continuations(_condense_block_content(plain, budget, estimator))
    room = budget
    while estimator.count(condensed) > budget and room > 0:  # indentation cost: shrink more
        room = max(0, room - (estimator.count(condensed) - budget))
        condensed = indent_continuations(truncate(plain, room, estimator)).rstrip(" \n")
    condensed = _cut_before_tags(condensed)
    return condensed if estimator.count(condensed) <= budget else ""


def _condense_records(
    text: str, records: Sequence[ParsedRecord], budget: int, estimator: TokenEstimator
) -> str:
    """:func:`condense_memory_blocks` for ``<memories>`` blocks of one-line records: every
    kept record keeps its lead and group line (provenance); contents shrink first, trailing
    records go only when even their leads do not fit (with them, a group line no kept record
    sits under: it is in the gap before its first record), and the note saying so follows
    the block."""
    prefix, suffix = text[: records[0].start], text[records[-1].end :]
    gaps = [text[a.end : b.start] for a, b in itertools.pairwise(records)] + [""]
    frame_cost = [
        estimator.count(r.lead) + estimator.count(gap) for r, gap in zip(records, gaps, strict=True)
    ]

    def note(kept: int) -> str:
        return "\n" + _omission_note(len(records) - kept) if kept < len(records) else ""

    def assemble(kept: int, contents: Sequence[str]) -> str:
        parts = [prefix]
        for i in range(kept):
            parts.append(records[i].lead + contents[i])
            if i < kept - 1:
                parts.append(gaps[i])
        parts.append(suffix)
        parts.append(note(kept))
        return "".join(parts)

    fitted = _water_fill(
        [r.content for r in records],
        (frame_cost, estimator.count(prefix) + estimator.count(suffix)),
        lambda kept: estimator.count(note(kept)),
        assemble,
        lambda content, share: _condense_record_content(content, share, estimator),
        budget,
        estimator,
    )
    if fitted is not None:
        return fitted
    head = text[: text.rfind(f"<{RECORDS_TAG}>", 0, records[0].start)].rstrip("\n")
    only_note = (head + "\n" if head else "") + _omission_note(len(records))
    if estimator.count(only_note) <= budget:
        return only_note
    return truncate(head, budget, estimator)


def condense_memory_blocks(text: str, budget: int, estimator: TokenEstimator) -> str:
    """Condense a section of rendered data blocks, keeping every delimiter intact.

    The text outside the blocks (header, data notice) is kept; every block keeps its delimiter
    lines; the rest of the budget is water-filled over the contents from the last (least
    important) block to the first (:func:`_water_fill`), larger ones condensed by their shape.
    Only when even the delimiters do not fit are trailing blocks dropped, with a note saying
    how many; if not even the header fits, it is truncated (no block is left half-open). A
    section of memory records (``<memories>``) is condensed the same way, records as units.
    """
    if estimator.count(text) <= budget:
        return text
    if budget <= 0:
        return ""
    records = parse_records(text)
    if records:
        return _condense_records(text, records, budget, estimator)
    blocks = parse_blocks(text)
    if not blocks:
        return truncate(text, budget, estimator)
    prefix, suffix = text[: blocks[0].start], text[blocks[-1].end :]
    gaps = [text[a.end : b.start] for a, b in itertools.pairwise(blocks)] + [""]
    frame_cost = [
        estimator.count(f"{b.opening}\n\n{b.closing}") + estimator.count(gap)
        for b, gap in zip(blocks, gaps, strict=True)
    ]

    def note(kept: int) -> str:
        return ("\n" if kept else "") + _omission_note(len(blocks) - kept)

    def assemble(kept: int, contents: Sequence[str]) -> str:
        parts = [prefix]
        for i in range(kept):
            parts.append(f"{blocks[i].opening}\n{contents[i]}\n{blocks[i].closing}")
            if i < kept - 1:
                parts.append(gaps[i])
        if kept < len(blocks):
            parts.append(note(kept))
        parts.append(suffix)
        return "".join(parts)

    fitted = _water_fill(
        [b.content for b in blocks],
        (frame_cost, estimator.count(prefix) + estimator.count(suffix)),
        lambda kept: estimator.count(note(kept)) if kept < len(blocks) else 0,
        assemble,
        lambda content, share: _condense_block_content(content, share, estimator),
        budget,
        estimator,
    )
    if fitted is not None:
        return fitted
    only_note = prefix.rstrip("\n") + "\n" + _omission_note(len(blocks))
    if estimator.count(only_note) <= budget:
        return only_note
    return truncate(prefix, budget, estimator)


CONDENSERS: dict[str, Condenser] = {**TEXT_CONDENSERS, "memory_blocks": condense_memory_blocks}

_TAG_TO_CONDENSER = {
    "code": "code_signatures",
    "timeline": "timeline",
    "event": "timeline",
    "events": "timeline",
    "triples": "entity_triples",
    "entities": "entity_triples",
    "relations": "entity_triples",
    "user": "user_message",
    "assistant": "assistant_message",
}


def choose_condenser(text: str, tags: Iterable[str] = ()) -> str:
    """Name of the condenser suited to ``text`` (a key of :data:`CONDENSERS`): a known tag,
    else ``memory_blocks`` for rendered data blocks, else the text condenser for its shape
    (:func:`~pipelines.prompt.text_condensers.text_condenser_for`)."""
    for tag in tags:
        name = _TAG_TO_CONDENSER.get(tag.strip().lower())
        if name:
            return name
    if parse_blocks(text):
        return "memory_blocks"
    return text_condenser_for(text)


def condense(
    text: str, budget: int, estimator: TokenEstimator, condenser: str | None = None
) -> tuple[str, str]:
    """Apply ``condenser`` (or the one :func:`choose_condenser` picks).

    Returns ``(result, condenser_name)``.  The result always fits: a condenser
    that broke its contract would be caught here and replaced by truncation.
    """
    name = condenser or choose_condenser(text)
    if name not in CONDENSERS:
        raise KeyError(f"unknown condenser {name!r}; known: {sorted(CONDENSERS)}")
    result = CONDENSERS[name](text, budget, estimator)
    if estimator.count(result) > max(budget, 0):
        result = truncate(text, budget, estimator)
    return result, name
