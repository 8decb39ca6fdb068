"""A memory's compact form (pure): the sentence of it that best matches the query, cut to a
token cap and marked as an excerpt, for memories that rank below what fits whole.

A context of a few whole records says much about a few memories; compact records say the
point of many more. The sentence is the one holding the most of the query's keywords (the
earliest on a tie, so a memory without any shows how it starts); a long memory's sentence is
taken from the chunk recall matched. A memory no longer than the cap stays whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.assemble.tokens import TokenEstimator
from pipelines.ingest.text import split_sentences
from pipelines.recall.chunks import ChunkSpan

__all__ = ["ELLIPSIS", "compact_text", "query_terms"]

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
    best = max(
        range(len(sentences)),
        key=lambda n: (sum(1 for t in terms if t in sentences[n].casefold()), -n),
    )
    sentence = " ".join(sentences[best].split())
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
