"""Deterministic atomic fact extraction (no LLM).

The verbatim turn is always stored; atomic facts are an *additional*, finer-grained index over
it. Extraction is a deterministic reformatting, never a judgement of importance:

1. Fenced code blocks are removed; the text is split into sentences
   (:func:`pipelines.ingest.text.split_sentences`).
2. A sentence ending in "?" is one unit. Other sentences are split into clauses at ";", dashes
   and at a coordinating conjunction that starts a new clause with its own subject ("..., and it
   was so powerful", "... because we need GDS"), so "I like cats and dogs" stays whole.
3. Leading discourse markers and greetings ("So,", "Well,", "Hi Caroline,") are removed and each
   unit is bounded to :attr:`FactConfig.max_words` words (cut at a word boundary, marked "…").
4. Each unit gets at most one category, by the first matching rule in priority order:
   ``question`` > ``provisional`` (hedged: "maybe", "might", "thinking about") > ``decision``
   > ``preference`` > ``action_item`` > ``constraint`` > ``fact``. Units matching no rule are
   not extracted (the verbatim text still holds them).
5. Decisions are credited only on user turns (:attr:`FactConfig.user_roles`). On any other
   role, decision language becomes ``provisional`` (rule ``decision-not-user``) or is dropped,
   per :attr:`FactConfig.assistant_decisions_as_provisional`: the model proposing "let's use
   Neo4j" is not the user committing to it.
6. ``fact`` needs a first-person declarative ("I", "my", "we"...) with an anchor: a capitalised
   word after the first, an acronym, a number, a time expression ("yesterday", "last week"), a
   family/relationship noun, or one of the caller-supplied entity names.

7. With the spaCy pipeline (as ingest runs it), a unit that is not a question must stand alone
   (:mod:`pipelines.ingest.fact_parse`): at least four words, a verb, not a dependent clause
   ("Melanie: My kids", "Caroline: Since I was 17 or so" are not facts); a clause that fails is
   replaced by its whole sentence when that one stands alone, else dropped; a relative time
   ("yesterday") gets the turn's date. Questions stay category ``question``: they are never
   embedded, so the Facts section of a context never shows them (stage schemas list the open
   ones).

Units are de-duplicated within a text by category and :func:`normalise_for_match`.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, get_args

from pipelines.ingest import fact_parse
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG, FactConfig
from pipelines.ingest.text import normalise_for_match, split_sentences, strip_code_blocks
from pipelines.language import current
from pipelines.language.facts import Rule

__all__ = ["FACT_CATEGORIES", "AtomicFact", "FactCategory", "extract_facts", "split_clauses"]

FactCategory = Literal[
    "decision", "preference", "constraint", "fact", "question", "action_item", "provisional"
]
FACT_CATEGORIES: tuple[FactCategory, ...] = get_args(FactCategory)


@dataclass(frozen=True, slots=True)
class AtomicFact:
    """One atomic unit of meaning extracted from a turn."""

    category: FactCategory
    text: str
    """The unit: one clause of the original wording, trimmed and bounded."""
    speaker: str | None
    role: str
    """Role of the turn, lower-cased ("user", "assistant", ...)."""
    confidence: float
    """Fixed per rule, in [0, 1]: how reliably the rule identifies the category."""
    rule: str
    """Name of the rule that fired (for explanations and evaluation)."""


_UNUSED_PIPES = ["ner"]
_WORD = re.compile(r"\S+")


def _has_name_anchor(clause: str) -> bool:
    """A capitalised word or acronym after the first word (proper-noun proxy, no model)."""
    words = _WORD.findall(clause)
    for word in words[1:]:
        token = word.strip("\"'“”‘’()[],.;:!?")
        if token[:1].isupper() and token.casefold() not in current().facts.not_name:
            return True
    return False


def split_clauses(sentence: str) -> list[str]:
    """Split a sentence into clauses (step 2 of the module docstring); questions stay whole."""
    sentence = sentence.strip()
    if sentence.endswith("?"):
        return [sentence]
    return [c for c in current().facts.clause_split.split(sentence) if c and c.strip()]


def _clean(clause: str, max_words: int) -> str:
    text = " ".join(clause.split())
    previous = None
    while previous != text:
        previous = text
        text = current().facts.leading_markers.sub("", text)
    question = text.rstrip().endswith("?")
    text = text.rstrip(" .,;:!—–-\"'”’…").strip().lstrip(",;:—–- ")
    words = text.split()
    if len(words) > max_words:
        text = " ".join(words[:max_words]).rstrip(",;:") + "…"
    elif question and text and not text.endswith("?"):
        text += "?"
    return text[:1].upper() + text[1:] if text[:1].islower() and text[:2] != "i'" else text


def _first_match(rules: tuple[Rule, ...], text: str) -> Rule | None:
    for rule in rules:
        if rule[1].search(text):
            return rule
    return None


def _classify(
    unit: str, original: str, is_user: bool, cfg: FactConfig, entity_names: Collection[str]
) -> tuple[FactCategory, str, float] | None:
    """(category, rule, confidence) of one cleaned unit, or ``None`` (see module docstring)."""
    if original.rstrip().endswith("?"):
        return "question", "question-mark", 0.9
    rule = _first_match(current().facts.question_word, unit)
    if rule:
        return "question", rule[0], rule[2]
    rule = _first_match(current().facts.provisional, unit)
    if rule:
        return "provisional", rule[0], rule[2]
    rule = _first_match(current().facts.decision, unit)
    if rule:
        if is_user:
            return "decision", rule[0], rule[2]
        if cfg.assistant_decisions_as_provisional:
            return "provisional", "decision-not-user", 0.4
        return None
    rule = _first_match(current().facts.preference, unit)
    if rule:
        return "preference", rule[0], rule[2]
    rule = _first_match(current().facts.action, unit)
    if rule:
        return "action_item", rule[0], rule[2]
    rule = _first_match(current().facts.constraint, unit)
    if rule and not current().facts.not_constraint.search(unit):
        return "constraint", rule[0], rule[2]
    if current().facts.first_person.search(unit):
        folded = unit.casefold()
        if any(name.casefold() in folded for name in entity_names if len(name) > 1):
            return "fact", "first-person-entity", 0.7
        if current().facts.anchor.search(unit) or _has_name_anchor(unit):
            return "fact", "first-person-anchored", 0.6
    return None


def extract_facts(
    text: str,
    role: str,
    speaker: str | None = None,
    *,
    config: FactConfig | None = None,
    entities: Collection[str] = (),
    nlp: Any = None,
    when: datetime | None = None,
) -> list[AtomicFact]:
    """Extract atomic facts from one turn (algorithm in the module docstring).

    ``role`` decides decision crediting (only :attr:`FactConfig.user_roles` make decisions);
    ``speaker`` is copied to every fact; ``entities`` are names already found in the turn (for
    instance by :class:`pipelines.ingest.extractor.EntityExtractor`) that anchor ``fact`` units.
    With ``nlp`` (the spaCy pipeline), every fact but a question must stand alone
    (:mod:`pipelines.ingest.fact_parse`; step 7); ``when`` is the turn's time, added to a fact
    that says a relative time. Returns facts in text order, at most
    :attr:`FactConfig.max_facts_per_text`.
    """
    cfg = config or DEFAULT_INGEST_CONFIG.facts
    if not cfg.enabled or not text.strip():
        return []
    role_key = role.casefold().strip()
    is_user = role_key in cfg.user_roles
    found: list[tuple[str, str, tuple[FactCategory, str, float]]] = []
    for sentence in split_sentences(strip_code_blocks(text)):
        for clause in split_clauses(sentence):
            unit = _clean(clause, cfg.max_words)
            if len(unit.split()) < cfg.min_words or current().facts.small_talk.match(unit):
                continue
            verdict = _classify(unit, clause, is_user, cfg, entities)
            if verdict is not None:
                found.append((unit, sentence, verdict))
    if nlp is not None:
        found = _standing_alone(found, nlp, cfg, when)
    facts: list[AtomicFact] = []
    seen: set[tuple[str, str]] = set()
    for unit, _, (category, rule, confidence) in found:
        dedup_key = (category, normalise_for_match(unit))
        if dedup_key in seen:
            continue
        seen.add(dedup_key)
        facts.append(AtomicFact(category, unit, speaker, role_key, confidence, rule))
        if len(facts) >= cfg.max_facts_per_text:
            return facts
    return facts


_Found = tuple[str, str, tuple[FactCategory, str, float]]


def _standing_alone(
    found: list[_Found], nlp: Any, cfg: FactConfig, when: datetime | None
) -> list[_Found]:
    """Units that stand alone, a failing clause replaced by its sentence when that one does;
    questions pass as they are (they are never shown as facts: not embedded)."""
    checked = [i for i, (_, _, v) in enumerate(found) if v[0] != "question"]
    docs = dict(
        zip(checked, nlp.pipe([found[i][0] for i in checked], disable=_UNUSED_PIPES), strict=True)
    )
    retry = {i for i in checked if not fact_parse.stands_alone(docs[i], cfg.min_standalone_words)}
    # a clause is replaced by its sentence only when no other clause of it stands alone (else
    # the sentence would repeat that fact)
    standing = {found[i][1] for i in checked if i not in retry}
    sentences = {i: _clean(found[i][1], cfg.max_words) for i in sorted(retry)}
    retried = dict(zip(sentences, nlp.pipe(sentences.values(), disable=_UNUSED_PIPES), strict=True))
    out: list[_Found] = []
    for i, (unit, sentence, verdict) in enumerate(found):
        doc = retried.get(i, docs.get(i))
        if i in retry:
            alone = fact_parse.stands_alone(doc, cfg.min_standalone_words)
            if sentence in standing or sentences[i] == unit or not alone:
                continue
            unit = sentences[i]
        if when is not None and doc is not None and fact_parse.relative_time(doc):
            unit = fact_parse.with_date(unit, when)
        out.append((unit, sentence, verdict))
    return out
