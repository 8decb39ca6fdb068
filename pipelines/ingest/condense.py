"""Which sentence of a memory a compact record keeps (pure, no model: the read path).

A compact record shows one sentence of a memory. The one that holds most of the query's
terms is the right one; when none holds any (or several tie), the earliest is not: a chat
turn's first sentence is often only social ("Wow, Caroline!", "Thanks, Mel."), and the record
then carries nothing. :func:`informative_sentence` breaks the tie by what the sentence says
(:func:`~pipelines.ingest.salience.lexical_sentence_info`), never picks a social sentence
while another says something, and drops a social opening clause from the one it keeps
("Hey Caroline, | I ran a charity race last Saturday").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pipelines.ingest.salience import (
    is_name,
    is_phatic_sentence,
    lexical_sentence_info,
)
from pipelines.ingest.text import match_tokens
from pipelines.language import current

__all__ = ["informative_sentence", "without_social_opening"]

_OPENING_BREAK = re.compile(r"[,!;:.—–]\s+")


def without_social_opening(sentence: str, names: frozenset[str] = frozenset()) -> str:
    """``sentence`` without the greeting, thanks or interjection clause it opens with ("Wow,
    Caroline! | That sounds great", "Thanks for the tips, | I'll try them"), when what
    follows says something; else ``sentence`` as it is (whitespace collapsed)."""
    text = " ".join(sentence.split())
    words = [w for w in match_tokens(text[:60]) if not is_name(w, names)]
    talk = current().talk
    if not words or (words[0] not in talk.social_acts and words[0] not in talk.interjections):
        return text
    rest = text
    while (m := _OPENING_BREAK.search(rest)) is not None and m.end() < len(rest):
        head = rest[: m.start()]
        if not is_phatic_sentence(head, names):
            break  # this clause says something ("Thanks for the Boston tips")
        rest = rest[m.end() :]
    if rest is text or is_phatic_sentence(rest, names):
        return text
    return rest[:1].upper() + rest[1:]


def informative_sentence(
    sentences: Sequence[str], terms: Sequence[str], names: frozenset[str] = frozenset()
) -> tuple[int, str]:
    """The index of the sentence a compact record keeps and its text: the most of ``terms``
    (case-folded query keywords), then not social talk, then the most information, then the
    earliest; its social opening clause dropped (:func:`without_social_opening`).
    ``names``: the speakers' name forms (:func:`~pipelines.ingest.salience.name_forms`), so
    a vocative counts for nothing. ``sentences`` must not be empty."""
    if not sentences:
        raise ValueError("no sentences")

    def rank(n: int) -> tuple[int, bool, float, int]:
        s = sentences[n]
        hits = sum(1 for t in terms if t in s.casefold())
        return (hits, not is_phatic_sentence(s, names), lexical_sentence_info(s, names), -n)

    best = max(range(len(sentences)), key=rank)
    return best, without_social_opening(sentences[best], names)
