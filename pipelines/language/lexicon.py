"""English word lists of the entity path and the stop words the read side shares.

Each list is small and says what it is for. Everything else the entity filter decides is
language-neutral evidence: casing across the batch, the speakers' names, string form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from spacy.lang.en.stop_words import STOP_WORDS as _SPACY_STOP_WORDS
from spacy.strings import hash_string  # type: ignore[attr-defined]  # no stub, in spaCy 3

__all__ = [
    "COMMON_ACRONYMS",
    "DISCOURSE_WORDS",
    "GENERIC_WORDS",
    "NAME_PARTICLES",
    "PRONOUN_I",
    "STOP_WORDS",
    "WEEKDAY_ABBREVIATIONS",
    "LexiconRules",
    "dictionary_words",
    "in_dictionary",
]

# spaCy's English stop words: a capitalised stop word opening a sentence is never a name.
STOP_WORDS: frozenset[str] = frozenset(_SPACY_STOP_WORDS)

# Forms of the pronoun "I": capitalised everywhere, never a name.
PRONOUN_I = frozenset({"i", "i'm", "i've", "i'll", "i'd", "i’m", "i’ve", "i’ll", "i’d"})

# Interjections, greetings and discourse words that open or close a chat turn; the small
# recogniser tags them PERSON/NORP/ORG when capitalised ("Congrats", "Bye Caroline", "Nah").
DISCOURSE_WORDS = frozenset(
    {
        "hi", "hey", "hello", "hiya", "howdy", "yo", "bye", "goodbye", "byee", "cya", "cheers",
        "thanks", "thank", "thx", "ty", "congrats", "congratulations", "sorry",
        "please", "wow", "whoa", "woah", "yay", "yep", "yup", "yeah", "yes", "nope", "nah",
        "no", "ok", "okay", "oh", "ooh", "ah", "aw", "aww", "awww", "uh", "um", "hmm", "ugh",
        "oops", "omg", "lol", "haha", "hahaha", "lmao", "btw", "glad", "totally",
        "absolutely", "definitely", "exactly", "honestly", "anyway", "kinda", "sorta",
        "gonna", "wanna", "gotta",
    }
)  # fmt: skip

# Pronouns, determiners, deictic and generic words that NER or the rules sometimes return
# as a whole entity ("the guys", "today", "assistant").
GENERIC_WORDS = frozenset(
    {
        "i", "me", "my", "mine", "myself", "you", "your", "yours", "he", "him", "his", "she",
        "her", "hers", "it", "its", "we", "us", "our", "ours", "they", "them", "their", "this",
        "that", "these", "those", "someone", "somebody", "something", "anyone", "anybody",
        "anything", "everyone", "everybody", "everything", "nobody", "nothing", "thing",
        "things", "stuff", "people", "guys", "folks", "today", "tonight", "tomorrow",
        "yesterday", "now", "later", "soon", "here", "there", "monday", "tuesday", "wednesday",
        "thursday", "friday", "saturday", "sunday", "weekend", "morning", "evening",
        "afternoon", "night", "week", "month", "year", "lol", "haha", "hahaha", "omg", "ok",
        "okay", "yes", "yeah", "no", "hi", "hey", "hello", "thanks", "thank you", "wow",
        "cool", "nice", "great", "awesome", "user", "assistant", "ai",
    }
)  # fmt: skip

# Common nouns usually written as acronyms ("the API", "a CDN link"): not names of things.
COMMON_ACRONYMS = frozenset(
    {"api", "apis", "ui", "ux", "url", "urls", "id", "ids", "db", "cli", "gui", "cdn", "ci",
     "cd", "os", "faq", "pr", "qa", "app", "apps", "tv", "pc", "eta", "asap", "fyi", "diy"}
)  # fmt: skip

# Unambiguous weekday abbreviations (dates, not things); "Sun", "Sat", "Wed" are left out.
WEEKDAY_ABBREVIATIONS = frozenset({"tues", "weds", "thur", "thurs", "fri"})

# Lower-case words that may stand inside a name ("Bank of America", "Leonardo da Vinci") but
# never at its edges.
NAME_PARTICLES = frozenset(
    {"of", "the", "and", "de", "da", "di", "del", "della", "van", "von", "der", "den", "la",
     "le", "du", "des", "al", "el", "bin", "ibn", "y", "for", "on", "in", "at", "&"}
)  # fmt: skip


# A leading article, dropped from an entity's name and key ("the Beatles" = "Beatles").
LEADING_ARTICLE = re.compile(r"^the\s+", re.IGNORECASE)

# Lower-case words a Title Case name may hold ("Lord of the Rings").
TITLE_MINOR_WORDS = frozenset({"a", "an", "the", "of", "and", "or", "in", "on", "at", "to",
                               "for", "with", "by", "from", "de", "la", "le", "vs"})  # fmt: skip


def dictionary_words(
    nlp: Any, parts: tuple[str, ...] = ("noun", "verb", "adj", "adv")
) -> frozenset[str]:
    """The language's words of the given parts of speech as the pipeline's lemmatizer knows
    them (for English, WordNet's lemmas); empty without one. WordNet's nouns and adjectives
    include proper names ("paris", "john", "caroline"): only its verbs say that a capitalised
    word is ordinary."""
    try:
        tables = nlp.get_pipe("lemmatizer").lookups
    except (KeyError, AttributeError):
        return frozenset()
    if "lemma_index" not in tables.tables:
        return frozenset()
    index = tables.get_table("lemma_index")
    words: set[str] = set()
    for part in parts:
        words.update(w for w in index.get(hash_string(part), []) if w.isalpha())
    return frozenset(words)


# Inflections stripped to find a lemma: "integrates" -> "integrate", "medians" -> "median".
_SUFFIXES = ("ies", "es", "s", "ed", "ing", "d")


def in_dictionary(word: str, words: frozenset[str]) -> bool:
    """Whether ``word`` (case-folded) or its lemma by a plain suffix is an ordinary word."""
    folded = word.casefold()
    if folded in words:
        return True
    for suffix in _SUFFIXES:
        if folded.endswith(suffix) and len(folded) > len(suffix) + 2:
            stem = folded[: -len(suffix)]
            if stem in words or stem + "e" in words or (suffix == "ies" and stem + "y" in words):
                return True
    return False


@dataclass(frozen=True)
class LexiconRules:
    """The entity path's word lists and the shared stop words (defaults: English)."""

    #: spaCy's stop words: never a name when capitalised; not a topic word.
    stop_words: frozenset[str] = STOP_WORDS
    #: Forms of "I": capitalised, never a name.
    pronoun_i: frozenset[str] = PRONOUN_I
    #: Greetings and discourse words NER takes for names ("Congrats", "Nah").
    discourse_words: frozenset[str] = DISCOURSE_WORDS
    #: Pronouns and generic words NER returns as an entity ("the guys", "today").
    generic_words: frozenset[str] = GENERIC_WORDS
    #: Common nouns written as acronyms ("the API"): not names of things.
    common_acronyms: frozenset[str] = COMMON_ACRONYMS
    #: Weekday abbreviations: dates, not things.
    weekday_abbreviations: frozenset[str] = WEEKDAY_ABBREVIATIONS
    #: Lower-case words inside a name ("Bank of America"), never at its edges.
    name_particles: frozenset[str] = NAME_PARTICLES
    #: A leading article, dropped from entity names and keys.
    leading_article: re.Pattern[str] = LEADING_ARTICLE
    #: Lower-case words inside a Title Case name.
    title_minor_words: frozenset[str] = TITLE_MINOR_WORDS
