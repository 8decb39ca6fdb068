"""Standing instructions and preferences, from user turns only, deterministically (no LLM).

A standing instruction tells the assistant how to behave from now on ("Always format code with
syntax highlighting", "Never use semicolons", "From now on, answer in French", "Please always
include version numbers", "Don't add comments to the code"); a preference says what the user
prefers ("I prefer SQLite for now", "I'd rather use Flask", "I always use tabs"). Both are
kept as facts of their own category (``instruction``, ``preference``) with their turn as
provenance, listed per space, and superseded when changed.

**Extraction** (:func:`extract_standing`), per sentence of a user turn (fenced code removed,
quoted text blanked so quoted speech never counts):

* a sentence ending in "?" is a question, never a standing statement ("Should I always use
  HTTPS?"), except for what it states before it starts asking ("I prefer Excel for control,
  can you help me …?" states a preference); a clause after "if", "whether", "when" or an
  auxiliary ("would I prefer") is never one either;
* **instruction**: the sentence *starts* (after "please", "also", "and" or "from now on,")
  with "always", "never", "don't" / "do not", "make sure to", "be sure to", "stop",
  "avoid", "keep", "use", "only", or starts with "from now on", "going forward", "in the
  future", or is "I want you to …" / "I'd like you to always …". Phrases that talk about
  feelings rather than behaviour ("don't worry", "don't forget", "never mind") are not
  instructions; "use", "keep" and "only" need a standing marker in the sentence ("always",
  "from now on", "every time", "whenever", "for all", "in every") since "Use the second
  option" is a one-off request;
* **preference**: "I prefer …", "I'd prefer / I would prefer", "I'd rather / I would rather",
  "my preference is", "I favour", "I always / I never …" (a habit), cut at the next clause
  that asks or explains (", can you", ", how", ", so", "because" …).

A statement conditioned on a topic ("… when I ask about deadlines", "… when discussing
security") records the topic as its ``condition``: recall matches a question to it.

Each statement records whether it announces a **change** ("now", "instead", "anymore",
"no longer", "from now on", "switch", "changed my mind", "actually") and its polarity
(``negated``: "never", "don't", "no longer", "stop", "avoid"; not in a purpose clause such as
"… to avoid delays").

**Supersession** (:func:`supersedes`): a new statement retires the most similar active one of
the same category and speaker in the space when their embeddings are at least
``restate_similarity`` alike (a restatement: the latest wording wins), or at least
``change_similarity`` alike and the new one announces a change or flips the polarity ("I
prefer SQLite for now" → "I prefer PostgreSQL now"). Two different standing rules ("Always
include type hints", "Always include docstrings") stay side by side. A statement identical to an
active one (same normalised text) supersedes nothing: both stay active (the Facts section shows
one, it de-duplicates by normalised text), each with its own turn as provenance.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from pipelines.ingest import standing_parse
from pipelines.ingest.text import normalise_for_match, split_sentences, strip_code_blocks
from pipelines.language import current

__all__ = ["Standing", "StandingCategory", "extract_standing", "supersedes"]

StandingCategory = Literal["instruction", "preference"]


@dataclass(frozen=True, slots=True)
class Standing:
    category: StandingCategory
    text: str
    rule: str
    confidence: float
    change: bool
    negated: bool
    #: what the statement applies to ("when I ask about deadlines" -> "deadlines")
    condition: str | None = None


_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|(?<!\w)'[^'\n]{2,}'(?!\w)")
_UNUSED_PIPES = ["ner"]
_WORDS = re.compile(r"\S+")


def _blank_quotes(sentence: str) -> str:
    return _QUOTED.sub(lambda m: " " * len(m.group(0)), sentence)


@dataclass(frozen=True, slots=True)
class _Candidate:
    """What the opening words suggest; the grammar checks decide (:mod:`standing_parse`)."""

    category: StandingCategory
    text: str
    rule: str
    confidence: float
    #: instruction: the body to parse after "You "; preference: the whole sentence
    parse: str
    #: a request that is standing only with a marker ("make sure to ALWAYS cite sources")
    needs_marker: bool = False


def _statement(c: _Candidate, text: str, condition: str | None) -> Standing | None:
    text = " ".join(text.split()).strip(" ,;:-")
    if len(_WORDS.findall(text)) < 2:
        return None
    text = text[:1].upper() + text[1:]
    return Standing(
        c.category,
        text,
        c.rule,
        c.confidence,
        bool(current().standing.change.search(text)),
        bool(current().standing.negated.search(current().standing.purpose.sub("", text))),
        condition,
    )


def _declarative(sentence: str) -> str | None:
    """A sentence that ends in "?" up to where it starts asking, or None if it only asks."""
    if not sentence.endswith("?"):
        return sentence
    m = current().standing.asking.search(sentence)
    return sentence[: m.start()] if m is not None else None


def _instruction(sentence: str, original: str) -> _Candidate | None:
    """``sentence`` has its quotations blanked (same offsets as ``original``)."""
    lead = current().standing.lead.match(sentence)
    body = sentence[lead.end() :] if lead else sentence
    offset = len(sentence) - len(body)
    text = original[offset:].rstrip(".!")
    standing_start = current().standing.standing_start.match(body)
    rest = body
    if standing_start:
        rest = body[standing_start.end() :].lstrip(" ,:")
        again = current().standing.lead.match(rest)
        rest = rest[again.end() :] if again else rest
    if current().standing.not_instruction.match(rest):
        return None
    verb_at = len(sentence) - len(rest)
    opener = current().standing.opener.match(rest)
    if opener:
        verb_at += opener.end()
    parse = original[verb_at:].strip().rstrip(".!")
    if standing_start or current().standing.instruction.match(rest):
        marked = bool(standing_start) or bool(current().standing.inherently_standing.match(rest))
        return _Candidate("instruction", text, "imperative", 0.8, parse, not marked)
    if current().standing.weak_instruction.match(
        rest
    ) and current().standing.standing_marker.search(rest):
        return _Candidate("instruction", text, "imperative-marked", 0.7, parse)
    return None


def _preference(sentence: str, original: str) -> _Candidate | None:
    for m in current().standing.preference.finditer(sentence):
        if current().standing.not_subject.search(sentence[: m.start()]):
            continue
        return _Candidate("preference", "", "prefer", 0.8, original.rstrip(".!"))
    return None


def _verified(c: _Candidate, doc: Any, i_doc: Any) -> Standing | None:
    """The candidate as a statement if its grammar holds (:mod:`standing_parse`)."""
    if c.category == "instruction":
        if not standing_parse.instruction_holds(doc, i_doc):
            return None
        if c.needs_marker and not standing_parse.is_standing_marked(c.text):
            return None
        return _statement(c, c.text, standing_parse.condition_of(doc))
    span = standing_parse.preference_span(doc)
    if span is None:
        return None
    text = c.parse[span[0] : span[1]]
    end = current().standing.clause_end.search(text)
    return _statement(c, text[: end.start()] if end else text, standing_parse.condition_of(doc))


def _candidates(text: str) -> list[_Candidate]:
    out: list[_Candidate] = []
    for raw in split_sentences(strip_code_blocks(text)):
        original = _declarative(raw.strip())
        if not original:
            continue
        blanked = _blank_quotes(original)
        if blanked[:1].isspace():  # the sentence opens with a quotation
            continue
        found = _instruction(blanked, original) or _preference(blanked, original)
        if found is not None:
            out.append(found)
    return out


def extract_standing(text: str, role: str, user_roles: frozenset[str], nlp: Any) -> list[Standing]:
    """Standing instructions and preferences of one turn (module docstring); ``[]`` unless
    ``role`` (case-insensitive) is one of ``user_roles``. ``nlp`` is the spaCy pipeline (its
    tagger and parser check each candidate)."""
    if role.casefold().strip() not in user_roles or not text.strip():
        return []
    candidates = _candidates(text)
    if not candidates:
        return []
    should = " ".join(current().standing.should) + " "
    inputs: list[str] = []
    for c in candidates:
        inputs += [should + c.parse, "I " + c.parse] if c.category == "instruction" else [c.parse]
    docs = iter(nlp.pipe(inputs, disable=_UNUSED_PIPES))
    out: list[Standing] = []
    seen: set[tuple[str, str]] = set()
    for c in candidates:
        found = _verified(c, next(docs), next(docs) if c.category == "instruction" else None)
        if found is not None and (found.category, found.text.casefold()) not in seen:
            seen.add((found.category, found.text.casefold()))
            out.append(found)
    return out


def supersedes(
    new: Standing,
    new_vector: np.ndarray,
    active: Sequence[tuple[Standing, np.ndarray]],
    restate_similarity: float,
    change_similarity: float,
) -> int | None:
    """Index into ``active`` (same category and speaker, oldest first) of the statement ``new``
    retires, or None (module docstring). Ties go to the most recent. A statement identical to
    an active one (:func:`normalise_for_match`) retires nothing: it says the same rule again."""
    best, best_sim = None, -1.0
    same = normalise_for_match(new.text)
    for i, (old, vec) in enumerate(active):
        if old.category != new.category:
            continue
        if normalise_for_match(old.text) == same:
            return None
        sim = float(np.dot(new_vector, vec))
        if sim >= best_sim:
            best, best_sim = i, sim
    if best is None:
        return None
    old = active[best][0]
    if best_sim >= restate_similarity:
        return best
    if best_sim >= change_similarity and (new.change or new.negated != old.negated):
        return best
    return None
