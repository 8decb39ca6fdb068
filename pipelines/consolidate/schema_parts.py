"""The parts of a stage schema (pure): the stage's inputs, how a text is read without its
social talk (:class:`TextReader`), its key entities, decisions, outcomes, open questions and
highlights. See :mod:`pipelines.consolidate.schemas` for the whole schema and the service
around it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from pipelines.consolidate.claims import content_words
from pipelines.consolidate.config import SchemaConfig
from pipelines.ingest.salience import Salience, is_name, name_forms
from pipelines.ingest.text import match_tokens, normalise_for_match, split_sentences
from pipelines.language import current
from pipelines.recall.query import ends_with_question

_OUTCOME_CATEGORIES = frozenset({"fact", "decision", "action_item"})


def _not_asked() -> frozenset[str]:
    """Words a question does not ask about (see :func:`open_questions`)."""
    talk = current().talk
    return talk.social_acts | talk.interjections | talk.light_verbs | talk.generic_nouns


@dataclass(frozen=True, slots=True)
class StageMemory:
    id: str
    text: str
    speaker: str | None = None
    role: str | None = None
    time: datetime | None = None
    session_id: str | None = None
    turn_index: int | None = None
    entity_keys: tuple[str, ...] = ()

    def order(self) -> tuple[float, str, int, str]:
        ts = self.time.timestamp() if self.time is not None else float("-inf")
        return (ts, self.session_id or "", self.turn_index or 0, self.id)


@dataclass(frozen=True, slots=True)
class StageFact:
    id: str
    memory_id: str
    category: str
    text: str
    speaker: str | None = None
    role: str | None = None


@dataclass(frozen=True, slots=True)
class StageEntity:
    key: str
    name: str
    kind: str | None = None


def first_sentence(text: str, words: int) -> str:
    sentences = split_sentences(text)
    first = (sentences[0] if sentences else text).strip()
    return _words(first, words)


def _words(text: str, words: int) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


class TextReader:
    """The informative part of texts (their salience, when the caller computed it)."""

    def __init__(self, salience: Mapping[str, Salience] | None) -> None:
        self.salience = salience or {}

    def clean(self, text: str) -> str:
        """``text`` without its social sentences and clauses ("" when that is all it is);
        ``text`` itself when its salience is unknown."""
        got = self.salience.get(text)
        return text if got is None else got.text()

    def score(self, text: str) -> float:
        got = self.salience.get(text)
        return float(len(content_words(text))) if got is None else got.score

    def highlight(self, text: str, words: int) -> str:
        got = self.salience.get(text)
        return first_sentence(text, words) if got is None else _words(got.best(), words)


def rank_key_entities(
    ordered: Sequence[StageMemory],
    entities: Sequence[StageEntity],
    speakers: Sequence[str],
    config: SchemaConfig,
) -> tuple[list[str], set[str]]:
    """The names of the stage's key entities (most mentioned first, speakers left out) and
    the keys of the entities ranked with them."""
    speaker_keys = {s.casefold() for s in speakers}
    forms = name_forms(speakers)
    by_key = {e.key: e for e in entities}
    mentions = Counter(k for m in ordered for k in set(m.entity_keys) if k in by_key)
    ranked = sorted(mentions.items(), key=lambda kv: (-kv[1], by_key[kv[0]].name.casefold()))

    def speaker_like(name: str) -> bool:
        words = match_tokens(name)
        return name.casefold() in speaker_keys or (bool(words) and all(
            is_name(w, forms) or w in current().talk.social_acts for w in words
        ))  # fmt: skip

    key_entities = [
        by_key[k].name
        for k, _ in ranked
        if not (config.exclude_speaker_entities and speaker_like(by_key[k].name))
        and not _only_social(by_key[k].name)
    ][: config.max_entities]
    return key_entities, {k for k, _ in ranked if by_key[k].name in key_entities}


def _only_social(name: str) -> bool:
    """A name made only of greetings, thanks and interjections ("Congrats", "Wow")."""
    words = match_tokens(name)
    talk = current().talk
    return bool(words) and all(w in talk.social_acts or w in talk.interjections for w in words)


def find_open_questions(
    ordered: Sequence[StageMemory],
    fact_list: Sequence[StageFact],
    position: Mapping[str, int],
    config: SchemaConfig,
    forms: frozenset[str] = frozenset(),
    reader: TextReader | None = None,
) -> list[str]:
    """Question facts that none of the next ``answer_window`` memories of another speaker
    answers, in order. Only what a question asks about counts: not the speakers' names, nor
    greetings, interjections, light verbs and generic nouns ("Hey Mel, what's up?", "How
    have things been?" ask about nothing); only a text that asks ("?") is a question, and a
    tag question ("..., right?") is not. In a conversation a question directly followed by
    the other party's turn in the same session, when that turn says something (``reader``:
    not social talk only), is answered: the two are an adjacency pair."""
    words_of: dict[str, set[str]] = {}

    def words(m: StageMemory) -> set[str]:
        if m.id not in words_of:
            words_of[m.id] = content_words(m.text)
        return words_of[m.id]

    open_q: list[str] = []
    talk, stop_words, not_asked = current().talk, current().lexicon.stop_words, _not_asked()
    for f in fact_list:
        if f.category != "question":
            continue
        asked = {
            w
            for w in content_words(f.text) - talk.question_words
            if w not in not_asked and w not in stop_words and not is_name(w, forms)
        }
        if len(asked) < config.min_question_words:
            continue
        if not ends_with_question(f.text) or talk.tag_question.search(f.text):
            continue
        asker = (f.speaker or f.role or "").casefold()
        after = position[f.memory_id] + 1
        others = [
            m
            for m in ordered[after : after + config.answer_window]
            if (m.speaker or m.role or "").casefold() != asker
        ]
        answered = any(len(asked & words(m)) >= config.answer_overlap * len(asked) for m in others)
        if not answered and reader is not None and after < len(ordered):
            asked_of, reply = ordered[after - 1], ordered[after]
            answered = (  # an adjacency pair: the other party's next turn replies
                reply in others
                and reply.session_id == asked_of.session_id
                and bool(reader.clean(reply.text).strip())
            )
        if not answered:
            open_q.append(f.text)
    return open_q


def dedupe_keep_last(items: Sequence[str], limit: int) -> list[str]:
    """The last ``limit`` of ``items`` with repeats (the same normalised text) folded into
    their latest place; empty ones left out."""
    seen: dict[str, str] = {}
    for text in items:
        key = normalise_for_match(text)
        if key:
            seen.pop(key, None)
            seen[key] = text
    values = list(seen.values())
    return values[-limit:] if limit else []


def stage_facts(
    facts: Sequence[StageFact], position: Mapping[str, int], reader: TextReader
) -> list[StageFact]:
    """The facts of the stage's memories without their social clauses, in memory order;
    a fact that is only social talk is left out."""
    return sorted(
        (
            replace(f, text=reader.clean(f.text))
            for f in facts
            if f.memory_id in position and reader.clean(f.text)
        ),
        key=lambda f: (position[f.memory_id], f.id),
    )


def decisions_and_outcomes(
    fact_list: Sequence[StageFact], config: SchemaConfig
) -> tuple[list[str], list[str]]:
    """The most recent decisions, and the most recent facts reporting a result that are
    not already decisions."""
    decisions = dedupe_keep_last(
        [f.text for f in fact_list if f.category == "decision"], config.max_decisions
    )
    outcomes = dedupe_keep_last(
        [
            f.text
            for f in fact_list
            if f.category in _OUTCOME_CATEGORIES
            and current().talk.outcome.search(f.text)
            and f.text not in decisions
        ],
        config.max_outcomes,
    )
    return decisions, outcomes


def pick_highlights(
    ordered: Sequence[StageMemory],
    position: Mapping[str, int],
    key_set: set[str],
    reader: TextReader,
    config: SchemaConfig,
) -> list[str]:
    """The most informative sentence of the memories that mention most key entities, then
    say most; never one that is only social talk."""
    informative = [m for m in ordered if reader.clean(m.text).strip()]
    scored = sorted(
        informative,
        key=lambda m: (-len(set(m.entity_keys) & key_set), -reader.score(m.text), position[m.id]),
    )
    picked = (reader.highlight(m.text, config.highlight_words) for m in scored)
    return list(dict.fromkeys(h for h in picked if h))[: config.max_highlights]
