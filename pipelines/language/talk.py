"""Social talk and questions: the speech acts that only keep a conversation going, the words
a question opens with, tag questions, and the verbs that report an outcome."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Heads of the speech acts that only keep a conversation going.
SOCIAL_ACTS = frozenset(
    {
        "hi",
        "hey",
        "heya",
        "hiya",
        "hello",
        "howdy",
        "yo",
        "bye",
        "goodbye",
        "thank",
        "thanks",
        "thx",
        "ty",
        "cheers",
        "congrats",
        "congratulation",
        "congratulations",
        "congratulate",
        "kudos",
        "welcome",
    }
)


#: Interjections and bare evaluations ("Wow!", "Awesome!", "lol").
INTERJECTIONS = frozenset(
    {
        "wow",
        "whoa",
        "oh",
        "ooh",
        "ah",
        "aah",
        "aw",
        "aww",
        "awww",
        "haha",
        "hahaha",
        "hah",
        "heh",
        "lol",
        "omg",
        "yay",
        "woohoo",
        "yeah",
        "yes",
        "yep",
        "yup",
        "nope",
        "nah",
        "ok",
        "okay",
        "sure",
        "cool",
        "great",
        "awesome",
        "amazing",
        "nice",
        "lovely",
        "wonderful",
        "fantastic",
        "incredible",
        "glad",
        "sweet",
        "hmm",
        "um",
        "uh",
        "well",
        "totally",
        "absolutely",
        "definitely",
        "really",
        "super",
        "good",
        "happy",
        "proud",
        "thrilled",
        "excited",
    }
)


#: Verbs that carry little on their own (their objects carry it).
LIGHT_VERBS = frozenset(
    {"be", "have", "do", "get", "go", "sound", "seem", "look", "feel", "make", "let", "say",
     "tell", "know", "think", "mean", "hear", "see", "want", "love", "like", "hope", "keep",
     "talk", "chat", "catch"}
)  # fmt: skip


#: Nouns too general to say what a conversation is about.
GENERIC_NOUNS = frozenset(
    {"thing", "things", "time", "times", "lot", "lots", "way", "ways", "day", "days", "stuff",
     "bit", "kind", "sort", "people", "guy", "guys", "one", "something", "anything",
     "everything", "nothing", "moment", "while", "today", "news", "idea", "ideas", "talk",
     "chat", "life", "world", "year", "years", "week", "weeks", "buddy", "friend", "dear",
     "pal", "man", "girl", "hun", "honey"}
)  # fmt: skip


#: Words that may come before a social act without being one ("And thanks for asking").
_DISCOURSE = frozenset({"and", "but", "so", "also", "oh", "well", "ok", "okay", "anyway"})


#: Inflections a stem drops when a question is compared with the query.
_SUFFIXES = ("ing", "ed", "es", "s")


#: Words that open the clause that asks ("I keep forgetting, where do you live now?").
_ASKING_OPENERS = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "do",
        "does",
        "did",
        "is",
        "are",
        "was",
        "were",
        "am",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "have",
        "has",
        "had",
        "may",
        "might",
    ]
)


#: A tag question asks for agreement, not information ("Time flies, huh?", "..., isn't it?").
_TAG_QUESTION = re.compile(
    r",\s*(?:right|huh|eh|yeah|no|ok|okay|true|"
    r"(?:is|are|was|were|do|does|did|have|has|can|could|would|will|should|wo|ca)n'?t\s+\w+|"
    r"don'?t you think)\s*\?\W*$",
    re.IGNORECASE,
)


#: A memory that reports an outcome ("shipped", "got the job").
_OUTCOME = re.compile(
    r"\b(?:finished|completed|done|shipped|released|launched|fixed|resolved|solved|deployed|"
    r"merged|published|passed|succeeded|won|achieved|graduated|adopted|signed|delivered|"
    r"got the|got a|got my|works now|working now|turned out|ended up|managed to|accepted|"
    r"approved|closed|raised|hired|bought|sold|moved|married|engaged|born)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TalkRules:
    """Social talk and questions in one language (defaults: English)."""

    #: Speech acts that only keep a conversation going ("thanks"): not content.
    social_acts: frozenset[str] = SOCIAL_ACTS
    #: Interjections and bare evaluations ("Wow!"): not content.
    interjections: frozenset[str] = INTERJECTIONS
    #: Verbs that carry little on their own.
    light_verbs: frozenset[str] = LIGHT_VERBS
    #: Nouns too general to say what a conversation is about.
    generic_nouns: frozenset[str] = GENERIC_NOUNS
    #: Words that may come before a social act ("And thanks").
    discourse: frozenset[str] = _DISCOURSE
    #: Question words and auxiliaries that open the clause that asks.
    question_words: frozenset[str] = _ASKING_OPENERS
    #: Inflections a stem drops (the echo check).
    stem_suffixes: tuple[str, ...] = _SUFFIXES
    #: A tag question asks for agreement, not information.
    tag_question: re.Pattern[str] = _TAG_QUESTION
    #: A memory that reports an outcome.
    outcome: re.Pattern[str] = _OUTCOME
