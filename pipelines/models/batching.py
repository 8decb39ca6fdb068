"""Batches for the embedding model, sized by padded word pieces rather than by texts.

A batch costs the model about its padded size (texts × the longest one's word pieces), so a
fixed number of texts per batch suits one length only: 64 texts of 256 pieces is a batch eight
times the size of 64 texts of 32. Texts are taken longest first (little padding) into batches
whose padded size stays within a budget, with a cap on texts; a text longer than the budget is
a batch of its own (BENCHMARKS.md, ingest throughput, gives the budget's effect on both
datasets).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["DEFAULT_BATCH_PIECES", "DEFAULT_BATCH_TEXTS", "piece_batches"]

#: Padded word pieces and texts per batch when ingest embeds (chosen on LoCoMo and BEAM-100K).
DEFAULT_BATCH_PIECES = 2048
DEFAULT_BATCH_TEXTS = 32


def piece_batches(lengths: Sequence[int], max_pieces: int, max_texts: int) -> list[list[int]]:
    """Indices into ``lengths`` (word pieces per text), longest first, in batches of at most
    ``max_texts`` texts whose padded size (texts × the first one's length) is at most
    ``max_pieces``; every index appears once."""
    if max_pieces < 1 or max_texts < 1:
        raise ValueError("max_pieces and max_texts must be at least 1")
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    for i in order:
        if batches:
            last = batches[-1]
            width = max(1, lengths[last[0]])
            if len(last) < max_texts and (len(last) + 1) * width <= max_pieces:
                last.append(i)
                continue
        batches.append([i])
    return batches
