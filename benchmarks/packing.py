"""The flat-recall baseline for context recall: recall results packed into a token budget.

Each recalled memory is rendered as one line ``"[<time>] <speaker>: <content>"`` and costs
``ceil(len(line) / 3)`` tokens (the conservative chars/3 estimate the assembler uses too). Lines
are taken in rank order; a memory that no longer fits is skipped and the scan continues, so a
shorter, lower-ranked memory can still use the room (first fit, the same rule as
``pipelines.assemble.sections.pack_to_budget``). The used tokens never exceed the budget.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.sut import ContextSpan, Hit

CHARS_PER_TOKEN = 3


def estimate_tokens(text: str, chars_per_token: int = CHARS_PER_TOKEN) -> int:
    return math.ceil(len(text) / chars_per_token) if text else 0


def _when(hit: Hit) -> str:
    return f"[{hit.time.date().isoformat() if hit.time else '?'}] "


def render(hit: Hit) -> str:
    return f"{_when(hit)}{hit.speaker or '?'}: {hit.content}"


def spans(hits: Sequence[Hit], section: str = "flat") -> tuple[ContextSpan, ...]:
    """The packed lines of ``hits`` (in order, one line each) as context spans: a line's
    ``speaker: content`` is its memory's, its ``[date] `` and line break are framing (as an
    assembler's group lines are)."""
    out: list[ContextSpan] = []
    for i, h in enumerate(hits):
        line, when = render(h), _when(h)
        out.append(ContextSpan(section, len(when) + (1 if i else 0)))
        out.append(ContextSpan(section, len(line) - len(when), h.id, record=True))
    return tuple(out)


@dataclass(frozen=True)
class Packed:
    ids: tuple[str, ...]
    used_tokens: int
    skipped: int
    offered: int


def pack(hits: Sequence[Hit], budget_tokens: int) -> Packed:
    if budget_tokens < 0:
        raise ValueError("budget must be non-negative")
    used = 0
    kept: list[str] = []
    skipped = 0
    for h in hits:
        cost = estimate_tokens(render(h)) + 1  # +1: the newline between lines
        if used + cost <= budget_tokens:
            kept.append(h.id)
            used += cost
        else:
            skipped += 1
    return Packed(tuple(kept), used, skipped, len(hits))
