"""Facts that stand alone, on spaCy's tags and dependency parse (no LLM).

A fact reaches the reader without its turn, so it must read as a statement by itself:

* at least :attr:`FactConfig.min_standalone_words` words and a verb at the root of its parse
  ("My kids", "Such a fun day" have none);
* not a dependent clause: its root carries no subordinating word ("Since I was 17 or so",
  "Because it was raining"), and it does not open with one;
* when it says a relative time ("yesterday", "last week"), the turn's date is added, since the
  reader cannot know when "yesterday" was: "I adopted a dog yesterday (8 May 2023)".

A clause that fails is replaced by its whole sentence when that one passes (the clause was cut
from it); otherwise the fact is not created (the turn itself is still stored and recalled).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pipelines.language import current

__all__ = ["stands_alone", "with_date"]

_VERBS = frozenset({"VERB", "AUX"})


def stands_alone(doc: Any, min_words: int) -> bool:
    """Whether the parsed unit ``doc`` reads as a statement by itself (module docstring)."""
    words = [t for t in doc if not t.is_punct and not t.is_space]
    # words as a reader counts them: "I'll do that" is three, though spaCy sees four tokens
    if (
        len(doc.text.split()) < min_words
        or not words
        or words[0].lower_ in current().facts.clause_openers
    ):
        return False
    roots = [t for t in doc if t.dep_ == "ROOT"]
    if not roots or roots[0].pos_ not in _VERBS:
        return False
    return not any(c.dep_ == "mark" for c in roots[0].children)


def relative_time(doc: Any) -> bool:
    """Whether the unit says a time relative to when it was said."""
    for t in doc:
        low = t.lower_
        if low in current().facts.relative_time:
            return True
        after = doc[t.i + 1].lower_ if t.i + 1 < len(doc) else ""
        if low in ("last", "next", "this") and after in current().facts.relative_units:
            return True
    return False


def with_date(text: str, when: datetime) -> str:
    """``text`` with the turn's date after it: "… yesterday (8 May 2023)"."""
    return f"{text} ({when.day} {when:%B %Y})"
