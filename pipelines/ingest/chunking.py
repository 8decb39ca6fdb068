"""Chunks of a long memory: split by structure first, then by length within the embedder's window.

A memory is stored verbatim once; when its text is longer than the embedding model's window it
is *indexed* as chunks, each a ``[start, end)`` character span of the memory's text. Pure:
the caller supplies the text's word-piece offsets (the embedder's own tokenizer) and, for the
final check, a function counting the word pieces of a list of texts.

Algorithm (:func:`chunk_spans`):

1. **Blocks** (:func:`blocks`): the text is cut into structural blocks at line level: a fenced
   code block (```` ``` ```` or ``~~~`` up to its closing fence, or the end of the text), a
   Markdown heading line, a list item (``-``, ``*``, ``+``, ``1.``, ``1)``) with its indented
   continuation lines, and paragraphs (runs of other non-blank lines). Blank lines separate
   blocks and belong to none.
2. **Packing**: consecutive blocks are packed greedily into one chunk while the chunk's word
   pieces fit the window; a heading starts a new chunk (it belongs with what follows it)
   once the current one holds at least half a window (short sections share a chunk rather
   than each costing an embedding).
3. **Oversized blocks** are split into lines, a line into sentences, a sentence at word-piece
   boundaries (at the last whitespace inside the window when there is one), then packed the
   same way. A block is never merged across a split.
4. **Check**: every chunk's text is counted again with ``count`` (a span tokenised alone can
   differ from the same span inside the text at a cut inside a word); a chunk over the window
   is halved at a word-piece boundary until it fits.

Guarantees (property-tested): chunks are in text order, do not overlap, lie within the text,
start and end on non-whitespace, every non-whitespace character of the text is in exactly one
chunk, no chunk has more than ``window`` word pieces by ``count``, and a block that fits the
window is never split. There is no overlap between chunks: splitting at structure keeps a
thought in one chunk far more often than a fixed stride does, and an overlap would have to pay
for itself in the read path's measurements first.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Block", "BlockKind", "Span", "blocks", "chunk_spans"]

BlockKind = Literal["code", "heading", "list", "paragraph"]
Span = tuple[int, int]

_FENCE = re.compile(r"^[ \t]{0,3}(```+|~~~+)")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+•]|\d{1,9}[.)])[ \t]+\S")
_INDENTED = re.compile(r"^(?:[ \t]{2,})\S")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
_LINE = re.compile(r"[^\n]*\n?")


@dataclass(frozen=True, slots=True)
class Block:
    """A structural unit of the text: ``text[start:end]`` (trimmed of surrounding whitespace)."""

    start: int
    end: int
    kind: BlockKind


def _lines(text: str) -> list[Span]:
    """(start, end) of every line, its newline excluded."""
    out = []
    for m in _LINE.finditer(text):
        if m.start() == m.end():
            break
        end = m.end() - 1 if text[m.end() - 1 : m.end()] == "\n" else m.end()
        out.append((m.start(), end))
    return out


def _trim(text: str, start: int, end: int) -> Span | None:
    """The span without leading and trailing whitespace (None when nothing is left)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def blocks(text: str) -> list[Block]:
    """Structural blocks of ``text`` in order (step 1 of the module docstring)."""
    lines = _lines(text)
    out: list[Block] = []
    i = 0

    def add(start: int, end: int, kind: BlockKind) -> None:
        span = _trim(text, start, end)
        if span is not None:
            out.append(Block(span[0], span[1], kind))

    while i < len(lines):
        start, end = lines[i]
        line = text[start:end]
        fence = _FENCE.match(line)
        if not line.strip():
            i += 1
        elif fence:
            marker = fence.group(1)[0] * 3
            j = i + 1
            while j < len(lines) and not text[lines[j][0] : lines[j][1]].lstrip().startswith(
                marker
            ):
                j += 1
            last = min(j, len(lines) - 1)
            add(start, lines[last][1], "code")
            i = last + 1
        elif _HEADING.match(line):
            add(start, end, "heading")
            i += 1
        elif _LIST_ITEM.match(line):
            j = i + 1
            while j < len(lines) and _INDENTED.match(text[lines[j][0] : lines[j][1]]):
                if _LIST_ITEM.match(text[lines[j][0] : lines[j][1]]):
                    break
                j += 1
            add(start, lines[j - 1][1], "list")
            i = j
        else:
            j = i + 1
            while j < len(lines):
                nxt = text[lines[j][0] : lines[j][1]]
                if not nxt.strip() or _FENCE.match(nxt) or _HEADING.match(nxt):
                    break
                if _LIST_ITEM.match(nxt):
                    break
                j += 1
            add(start, lines[j - 1][1], "paragraph")
            i = j
    return out


class _Tokens:
    """Word-piece offsets of the whole text: how many pieces a span holds, where to cut."""

    def __init__(self, offsets: Sequence[Span]) -> None:
        pieces = sorted((s, e) for s, e in offsets if e > s)
        self.starts = [s for s, _ in pieces]
        self.ends = [e for _, e in pieces]

    def count(self, start: int, end: int) -> int:
        """Pieces that start inside ``[start, end)``."""
        return bisect.bisect_left(self.starts, end) - bisect.bisect_left(self.starts, start)

    def cut(self, start: int, end: int, window: int) -> int:
        """The end of the first ``window`` pieces from ``start`` (at most ``end``)."""
        first = bisect.bisect_left(self.starts, start)
        last = first + window - 1
        if last >= len(self.ends):
            return end
        return max(start + 1, min(end, self.ends[last]))


def _sub_spans(text: str, start: int, end: int) -> list[Span]:
    """A block's lines, or a line's sentences: the next finer structure (None left: [])."""
    lines = [_trim(text, start + s, start + e) for s, e in _lines(text[start:end])]
    parts = [p for p in lines if p is not None]
    if len(parts) > 1:
        return parts
    pieces: list[Span] = []
    pos = start
    for m in _SENTENCE_END.finditer(text, start, end):
        span = _trim(text, pos, m.start())
        if span is not None:
            pieces.append(span)
        pos = m.end()
    span = _trim(text, pos, end)
    if span is not None:
        pieces.append(span)
    return pieces if len(pieces) > 1 else []


def _hard_split(text: str, start: int, end: int, window: int, tokens: _Tokens) -> list[Span]:
    """Cut a span without finer structure at word-piece boundaries, preferring whitespace."""
    out: list[Span] = []
    while start < end:
        if tokens.count(start, end) <= window:
            cut = end
        else:
            cut = tokens.cut(start, end, window)
            space = text.rfind(" ", start + 1, cut)
            if space > start and not text[start:space].isspace():
                cut = space
        span = _trim(text, start, cut)
        if span is not None:
            out.append(span)
        start = cut
        while start < end and text[start].isspace():
            start += 1
    return out


def _fit(text: str, start: int, end: int, window: int, tokens: _Tokens) -> list[Span]:
    """Spans of at most ``window`` pieces covering ``[start, end)``, finest structure last."""
    if tokens.count(start, end) <= window:
        return [(start, end)]
    parts = _sub_spans(text, start, end)
    if not parts:
        return _hard_split(text, start, end, window, tokens)
    return _pack([(s, e, False) for s, e in parts], text, window, tokens)


def _pack(
    units: Sequence[tuple[int, int, bool]], text: str, window: int, tokens: _Tokens
) -> list[Span]:
    """Greedy packing of consecutive units ``(start, end, starts_new)`` (step 2)."""
    out: list[Span] = []
    current: Span | None = None
    for start, end, starts_new in units:
        if tokens.count(start, end) > window:
            if current is not None:
                out.append(current)
                current = None
            out.extend(_fit(text, start, end, window, tokens))
            continue
        # a unit joins the open chunk when it fits, unless it starts a new section and the
        # open chunk is already half a window
        if (
            current is not None
            and tokens.count(current[0], end) <= window
            and (not starts_new or 2 * tokens.count(current[0], current[1]) < window)
        ):
            current = (current[0], end)
            continue
        if current is not None:
            out.append(current)
        current = (start, end)
    if current is not None:
        out.append(current)
    return out


def _check(
    text: str, spans: list[Span], window: int, count: Callable[[Sequence[str]], list[int]]
) -> list[Span]:
    """Step 4: re-count each chunk alone; halve any over the window until it fits."""
    out: list[Span] = []
    pending = spans
    while pending:
        sizes = count([text[s:e] for s, e in pending])
        retry: list[Span] = []
        for (s, e), n in zip(pending, sizes, strict=True):
            if n <= window or e - s <= 1:
                out.append((s, e))
                continue
            mid = s + (e - s) // 2
            space = text.rfind(" ", s + 1, mid + 1)
            cut = space if space > s else mid
            retry.extend(p for p in (_trim(text, s, cut), _trim(text, cut, e)) if p is not None)
        pending = retry
    return sorted(out)


def chunk_spans(
    text: str,
    window: int,
    offsets: Sequence[Span],
    count: Callable[[Sequence[str]], list[int]],
) -> list[Span]:
    """The chunks of ``text`` as ``(start, end)`` character spans (module docstring).

    ``window`` is the most word pieces a chunk may hold; ``offsets`` are the ``(start, end)``
    character offsets of the text's word pieces (special tokens left out); ``count`` gives
    the number of word pieces of each of a list of texts, tokenised alone.
    """
    if window < 1:
        raise ValueError("window must be at least one word piece")
    tokens = _Tokens(offsets)
    units = [(b.start, b.end, b.kind == "heading") for b in blocks(text)]
    return _check(text, _pack(units, text, window, tokens), window, count)
