"""What a long memory shows in a context (pure): never its whole text, but the chunks recall
chose for the query (its best matching ones, else its first), in text order, with a marker of
what was left out, so the reader knows the record is an excerpt and of how much."""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.recall.chunks import ChunkSpan

__all__ = ["GAP", "excerpt"]

#: Between two shown chunks that are not adjacent in the memory's text.
GAP = "[…]"


def excerpt(memory_id: str, text: str, spans: Sequence[ChunkSpan], shown: int) -> str:
    """The first ``shown`` of ``spans`` (best first) cut from ``text``, in text order, joined
    by :data:`GAP` where they are not adjacent, then the marker line
    ``[… chunk 12 of 3,701 of memory doc; 2,012,345 characters left out …]``.
    ``text`` as it is when there are no spans (a memory within the embedder's window)."""
    chosen = sorted(spans[: max(1, shown)], key=lambda s: s.start)
    if not chosen:
        return text
    pieces: list[str] = []
    kept = 0
    previous: ChunkSpan | None = None
    for span in chosen:
        piece = text[span.start : span.end].strip()
        if previous is not None and span.index != previous.index + 1:
            pieces.append(GAP)
        pieces.append(piece)
        kept += span.end - span.start
        previous = span
    numbers = ", ".join(f"{s.index + 1:,}" for s in chosen)
    noun = "chunk" if len(chosen) == 1 else "chunks"
    left_out = max(0, len(text) - kept)
    of = max(s.of for s in chosen)
    marker = (
        f"[… {noun} {numbers} of {of:,} of memory {memory_id}; {left_out:,} characters left out …]"
    )
    return "\n".join([*pieces, marker])
