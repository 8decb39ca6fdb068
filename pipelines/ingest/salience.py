"""What in a memory's text carries information, and what is only social (pure, no I/O).

A chat turn often opens or consists of talk that keeps the conversation going but says
nothing about its topic: greetings ("Hey Mel!"), thanks ("Thanks, Caroline!"),
congratulations, interjections and bare reactions ("Wow!", "Great idea!", "Long time no
talk!"). Summaries and compact records should skip it. Two readings of the same idea:

* :func:`analyse` (spaCy): each sentence is scored by its information content — nouns,
  proper nouns and named entities other than the speakers, numbers and dates, full verbs —
  and is *phatic* when it is a speech act of greeting/thanking/congratulating with little
  else, only interjections, names and function words, or a verbless fragment with little
  content; a leading greeting clause ("Thanks for the tips, | I'll try them") is dropped
  from a sentence that goes on to say something.
* :func:`lexical_sentence_info` / :func:`is_phatic_sentence` (no model, for the read path):
  the same with word lists instead of parts of speech.

The word lists are small closed classes of English (greetings, thanks, interjections,
light verbs, generic nouns), not phrases of any dataset.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pipelines.ingest.text import match_tokens, split_sentences
from pipelines.language import current

_CONTENT_POS = {"NOUN": 1.0, "PROPN": 1.5, "NUM": 1.5, "VERB": 0.5, "ADJ": 0.25, "ADV": 0.1}
_ENTITY_BONUS = 1.0
_NUMERIC_ENTS = frozenset({"DATE", "TIME", "MONEY", "QUANTITY", "PERCENT", "CARDINAL", "ORDINAL"})
#: A sentence with less information than this is phatic when it is a fragment (no verb) or
#: a social act.
_MIN_INFO = 2.0
#: A bracketed note ("[shared image: a photo of ...]") counts this share of its content: it
#: describes the turn, it is not what was said.
_ANNOTATION_SHARE = 0.2
_LEAD_BREAK = re.compile(r"[,!;:.—–]\s+")


def name_forms(names: Iterable[str]) -> frozenset[str]:
    """The case-folded words of some people's names (a speaker "Caroline Smith": "caroline",
    "smith"), for telling a vocative from a topic."""
    return frozenset(w for n in names for w in match_tokens(n) if len(w) > 1)


def is_name(word: str, names: frozenset[str]) -> bool:
    """``word`` (case-folded) is one of ``names`` or a short form or misspelling of one that
    shares its first three letters ("mel", "mell" for "melanie", "caro" for "caroline")."""
    if word in names:
        return True
    return len(word) >= 3 and any(
        n.startswith(word) or (word.startswith(n[:3]) and len(word) <= len(n)) for n in names
    )


# --------------------------------------------------------------------------- with spaCy


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str
    info: float
    phatic: bool


@dataclass(frozen=True, slots=True)
class Salience:
    """A memory's sentences (leading social clauses removed), each with its information
    content and whether it is phatic."""

    sentences: tuple[Sentence, ...]

    @property
    def informative(self) -> tuple[Sentence, ...]:
        return tuple(s for s in self.sentences if not s.phatic)

    @property
    def score(self) -> float:
        """Information content of the memory's informative sentences."""
        return sum(s.info for s in self.informative)

    @property
    def phatic(self) -> bool:
        """Nothing but social talk."""
        return not self.informative

    def text(self) -> str:
        """The informative sentences, in order ("" when phatic)."""
        return " ".join(s.text for s in self.informative)

    def best(self) -> str:
        """The most informative sentence (the earliest on a tie; "" when phatic)."""
        kept = self.informative
        if not kept:
            return ""
        top = max(range(len(kept)), key=lambda n: (kept[n].info, -n))
        return kept[top].text


def _token_info(tok: Any, names: frozenset[str]) -> float:
    low = tok.lower_
    if tok.is_punct or tok.is_space or tok.pos_ in {"INTJ", "PRON", "DET", "AUX", "CCONJ"}:
        return 0.0
    talk = current().talk
    if low in current().lexicon.stop_words or low in talk.interjections or low in talk.social_acts:
        return 0.0
    if tok.lemma_.lower() in talk.social_acts or is_name(low, names):
        return 0.0
    if tok.pos_ == "NOUN" and (
        low in talk.generic_nouns or tok.lemma_.lower() in talk.generic_nouns
    ):
        return 0.0
    if tok.pos_ == "VERB" and tok.lemma_.lower() in talk.light_verbs:
        return 0.0
    if tok.like_num:
        return _CONTENT_POS["NUM"]
    return _CONTENT_POS.get(tok.pos_, 0.0)


def _sentence(tokens: Sequence[Any], text: str, names: frozenset[str]) -> Sentence:
    info = sum(_token_info(t, names) for t in tokens)
    ents = {
        (t.ent_iob_, t.i)
        for t in tokens
        if t.ent_type_ and t.ent_iob_ == "B" and not is_name(t.lower_, names)
        and (t.ent_type_ in _NUMERIC_ENTS or t.pos_ in {"PROPN", "NUM"})
    }  # fmt: skip
    info += _ENTITY_BONUS * len(ents)
    words = [t for t in tokens if not (t.is_punct or t.is_space)]
    talk = current().talk
    first = next(
        (t for t in words if not is_name(t.lower_, names) and t.lower_ not in talk.discourse), None
    )
    social = first is not None and (
        first.lower_ in talk.social_acts or first.lemma_.lower() in talk.social_acts
    )
    fragment = not any(t.pos_ in {"VERB", "AUX"} for t in words)
    only_talk = all(
        t.pos_ == "INTJ"
        or t.lower_ in current().lexicon.stop_words
        or t.lower_ in talk.interjections
        or t.lower_ in talk.social_acts
        or is_name(t.lower_, names)
        for t in words
    )
    phatic = only_talk or info == 0.0 or ((social or fragment) and info < _MIN_INFO)
    if text.lstrip().startswith("["):
        info *= _ANNOTATION_SHARE  # "[shared image: ...]": a note about the turn, not said
    return Sentence(" ".join(text.split()), round(info, 3), phatic)


def _split_lead(text: str) -> tuple[str, str] | None:
    """A sentence opening with a social act split after its first clause ("Thanks for the
    tips, | I'll try them"); None when it does not open so or has one clause only."""
    talk = current().talk
    words = [w for w in match_tokens(text[:40]) if w not in talk.discourse]
    if not words or words[0] not in talk.social_acts:
        return None
    m = _LEAD_BREAK.search(text)
    if m is None or m.end() >= len(text):
        return None
    return text[: m.start()], text[m.end() :]


def analyse_doc(doc: Any, names: frozenset[str]) -> Salience:
    """The salience of one spaCy ``Doc`` (see the module docstring); ``names``: the
    speakers' name forms (:func:`name_forms`)."""
    text: str = doc.text
    out: list[Sentence] = []
    cursor = 0
    for piece in split_sentences(text):
        start = text.find(piece, cursor)
        if start < 0:
            start = cursor
        cursor = start + len(piece)
        parts = [(start, piece)]
        lead = _split_lead(piece)
        if lead is not None:
            head, rest = lead
            parts = [(start, head), (start + len(piece) - len(rest), rest)]
        for at, part in parts:
            span = doc.char_span(at, at + len(part), alignment_mode="expand")
            tokens = list(span) if span is not None else []
            sent = _sentence(tokens, part, names)
            if lead is not None and at == start and not sent.phatic:
                sent = Sentence(sent.text, sent.info, True)  # the opening thanks itself
            out.append(sent)
    return Salience(tuple(out))


def analyse(nlp: Any, texts: Sequence[str], names: Iterable[str]) -> list[Salience]:
    """The salience of each of ``texts`` with the spaCy pipeline ``nlp`` (batched)."""
    forms = name_forms(names)
    return [analyse_doc(doc, forms) for doc in nlp.pipe(list(texts), batch_size=64)]


# --------------------------------------------------------------------------- no model


def lexical_sentence_info(sentence: str, names: frozenset[str] = frozenset()) -> float:
    """Information content of ``sentence`` by word lists alone: content words (not stop
    words, interjections, social acts, names, generic nouns, light verbs), numbers counted
    once more, capitalised words inside the sentence half as much again."""
    words = re.findall(r"[\w'’-]+", sentence)
    info, talk = 0.0, current().talk
    for n, raw in enumerate(words):
        low = raw.casefold().strip("'’-")
        if (
            not low
            or low in current().lexicon.stop_words
            or low in talk.interjections
            or low in talk.social_acts
            or low in talk.generic_nouns
            or low in talk.light_verbs
            or is_name(low, names)
        ):
            continue
        info += 1.0
        if any(ch.isdigit() for ch in low):
            info += 1.0
        elif n > 0 and raw[:1].isupper():
            info += 0.5
    return info


def is_phatic_sentence(sentence: str, names: frozenset[str] = frozenset()) -> bool:
    """Whether ``sentence`` only keeps the conversation going, by word lists: it opens with
    a social act or an interjection and says less than one content word besides, or it has
    no content word at all."""
    words = [w for w in match_tokens(sentence) if not is_name(w, names)]
    info = lexical_sentence_info(sentence, names)
    if not words or info == 0.0:
        return True
    talk = current().talk
    opener = words[0] in talk.social_acts or words[0] in talk.interjections
    return opener and info < _MIN_INFO
