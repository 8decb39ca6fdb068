"""Which texts the entity recogniser must read: a text with no capitalised word is skipped.

spaCy's small English recogniser finds names by their shape, and nearly every name it keeps
(persons, places, organisations, products…) is capitalised. A chat turn whose only capitals
open a sentence with an ordinary word ("Thanks! That sounds great") or are the pronoun "I"
carries no name for it to find, and reading it costs as much as reading one that does. A
sentence-initial word is ordinary when its lower-case form is a stop word or occurs in lower
case somewhere in the same batch ("Glad" beside "so glad"), so a name that opens a sentence
("Barcelona was amazing") is still read. Rule-based technical terms are found either way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pipelines.language import current

__all__ = ["ner_needed", "ner_ranges"]

_WORD = re.compile(r"(?<![\w'’])[^\W\d_][\w'’-]*")
_SENTENCE_START = re.compile(r"(?:^|[.!?…:;\n\"“(*>-])[\s\"“'‘(*]*$")
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*\s+|\n\s*")
_LOOKBEHIND = 4  # characters before a word that decide whether it opens a sentence


def ner_needed(texts: Sequence[str]) -> list[bool]:
    """Per text: whether it holds a capitalised word that is neither the pronoun "I" nor an
    ordinary word opening a sentence (module docstring)."""
    lower = _lower_words(texts)
    return [_has_name_shape(text, lower) for text in texts]


def ner_ranges(texts: Sequence[str]) -> list[list[tuple[int, int]]]:
    """Per text: the ``(start, end)`` character ranges the recogniser must read, its
    sentences that may hold a name (as :func:`ner_needed` decides for a text), adjacent
    ones merged so that a name's neighbours are read with it. Empty: nothing to read."""
    lower = _lower_words(texts)
    out: list[list[tuple[int, int]]] = []
    for text in texts:
        ranges: list[tuple[int, int]] = []
        for start, end in sentence_ranges(text):
            if _has_name_shape(text[start:end], lower):
                if ranges and ranges[-1][1] == start:
                    ranges[-1] = (ranges[-1][0], end)
                else:
                    ranges.append((start, end))
        out.append(ranges)
    return out


def sentence_ranges(text: str) -> list[tuple[int, int]]:
    """``text`` cut after line breaks and after ``. ! ? …`` followed by white space; the
    ranges cover the whole text, each with its trailing white space."""
    ranges = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        ranges.append((start, m.end()))
        start = m.end()
    if start < len(text):
        ranges.append((start, len(text)))
    return ranges


def _lower_words(texts: Sequence[str]) -> set[str]:
    lower: set[str] = set(current().lexicon.stop_words)
    for text in texts:
        lower.update(m.group(0) for m in _WORD.finditer(text) if m.group(0).islower())
    return lower


def _has_name_shape(text: str, lower: set[str]) -> bool:
    for m in _WORD.finditer(text):
        word = m.group(0)
        if not any(c.isupper() for c in word):
            continue
        folded = word.casefold()
        if folded in current().lexicon.pronoun_i:
            continue
        opens = _SENTENCE_START.search(text, max(0, m.start() - _LOOKBEHIND), m.start())
        if opens is not None and word[1:].islower() and folded in lower:
            continue
        return True
    return False
