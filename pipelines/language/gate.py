"""The ingest gate's words: the turns that are noise ("ok", "lol"), and the phrasings that make
a turn more worth keeping (commitments, corrections, emotion, dates) or mark it negated."""

from __future__ import annotations

import re
from dataclasses import dataclass

_NOISE = re.compile(
    r"^(?:ok(?:ay)?|k+|kk|lol+|lmao|haha+|hehe+|hmm+|um+|uh+|yes|yeah|yep|yup|no|nope|sure|"
    r"cool|nice|great|awesome|thanks?|thank you|thx|ty|np|bye|hi|hey|hello|wow|omg|right|"
    r"got it|sounds good|same|true|indeed|fine|alright|:\)|:\(|:d)[\s!.?]*$",
    re.IGNORECASE,
)


_COMMITMENT = re.compile(
    r"\b(?:i|we)(?:'ll| will|'m going to| am going to| promise| commit| decided| have decided|"
    r"'ve decided| need to| must| have to)\b|\blet'?s\b|\bremember (?:that|to)\b|\bfrom now on\b"
    r"|\bmy (?:favou?rite|name|birthday)\b|\bi (?:prefer|love|hate|like|can't|never|always)\b",
    re.IGNORECASE,
)


_CORRECTION = re.compile(
    r"^(?:no|nope|actually|correction|wait)\b|\bi meant\b|\bnot \w+,? but\b|\binstead of\b|"
    r"\bthat's (?:wrong|not right|incorrect)\b|\bi was wrong\b|\bchanged my mind\b",
    re.IGNORECASE,
)


_EMOTION = re.compile(
    r"\b(?:love[ds]?|hate[ds]?|excited|thrilled|happy|sad|angry|upset|scared|afraid|worried|"
    r"anxious|stressed|frustrat\w*|proud|grateful|amazing|awful|terrible|powerful|devastated|"
    r"heartbroken|overwhelmed|nervous|miss(?:ed)?|lonely|furious|wonderful|incredible|"
    r"urgent|asap|critical|important|emergency)\b",
    re.IGNORECASE,
)


_DATE_WORD = re.compile(
    r"\b(?:yesterday|today|tomorrow|tonight|ago|last (?:week|month|year|night)|next (?:week|"
    r"month|year)|(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|march|april|"
    r"june|july|august|september|october|november|december)\b",
    re.IGNORECASE,
)


_NOT_NAMES = frozenset({"I", "I'm", "I've", "I'll", "I'd", "OK"})


_NEGATIONS = frozenset({"not", "no", "never", "nothing", "none", "nobody", "without", "cannot"})


@dataclass(frozen=True)
class GateRules:
    """The gate's words in one language (defaults: English). Without them the gate judges by
    novelty, length, numbers and names alone."""

    #: A whole turn of acknowledgement ("ok", "thanks!"): noise, not stored as a memory.
    noise: re.Pattern[str] = _NOISE
    #: Commitments and lasting statements ("I'll", "from now on", "my name"): kept.
    commitment: re.Pattern[str] = _COMMITMENT
    #: Corrections ("actually", "I meant"): kept.
    correction: re.Pattern[str] = _CORRECTION
    #: Emotion and urgency words: more salient.
    emotion: re.Pattern[str] = _EMOTION
    #: Date words: count as specifics, like numbers.
    date_word: re.Pattern[str] = _DATE_WORD
    #: Capitalised words that are no name ("I'm", "OK").
    not_names: frozenset[str] = _NOT_NAMES
    #: Negation words: a turn that negates is not a duplicate of one that affirms.
    negations: frozenset[str] = _NEGATIONS
