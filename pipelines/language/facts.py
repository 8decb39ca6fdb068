"""Fact phrasing: the clause splits, markers and per-category patterns by which a sentence is
taken for a decision, a preference, an action item or a constraint, and the time words a fact
must not lose."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Words that open a dependent clause: "Since I was 17 or so" means nothing without its turn.
CLAUSE_OPENERS = frozenset(
    {
        "since", "because", "cause", "when", "if", "although", "though", "while", "unless",
        "until", "as", "after", "before", "like", "whether", "whereas", "so", "than", "which",
        "who", "that", "where",
    }
)  # fmt: skip


#: Time words whose meaning depends on when the turn was said ("yesterday", "last week").
RELATIVE_TIME = frozenset(
    {"yesterday", "today", "tonight", "tomorrow", "ago", "recently", "lately", "currently"}
)


#: Words after "last", "next" or "this" that make a relative time ("last week", "this month").
RELATIVE_UNITS = frozenset(
    {"week", "weekend", "month", "year", "night", "morning", "evening", "afternoon", "summer",
     "winter", "spring", "fall", "autumn", "semester", "monday", "tuesday", "wednesday",
     "thursday", "friday", "saturday", "sunday"}
)  # fmt: skip


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_I = r"(?:i|we)"


_SUBJECT_START = (
    r"(?:i|i'm|i've|i'll|i'd|we|we're|we've|we'll|you|you're|he|he's|she|she's|it|it's|they|"
    r"they're|this|that|there|my|our|his|her|their)"
)


_CLAUSE_SPLIT = _rx(
    r"\s*;\s*|\s+[—–]\s+|\s+--\s+|"
    r",?\s+(?:and|but|so|because|though|although|while|whereas|plus|cause|since)\s+"
    rf"(?={_SUBJECT_START}\b)"
)


_LEADING_MARKERS = _rx(
    r"^(?:(?:hi|hey|hello|yo|dear)\b[^,!.?]{0,30}[,!.]+\s*"
    r"|(?:so|well|oh|ah|anyway|anyways|honestly|yeah|yep|yes|no|nope|ok|okay|sure|also|and|but|"
    r"btw|by the way|actually|wow|um|uh|hmm|lol|haha|plus|then|alright|right)\b[,!.]*\s+)"
)


_FIRST_PERSON = _rx(r"\b(?:i|i'm|i've|i'll|i'd|me|my|mine|myself|we|we're|we've|we'll|us|our)\b")


_SMALL_TALK = _rx(
    r"^(?:how are you|how're you|how are things|how's it going|how have you been|what's up|"
    r"what about you|and you|you|how about you|right|really|thanks|thank you)\W*$"
)


# (rule name, pattern, confidence) per category, in priority order inside each category.
Rule = tuple[str, re.Pattern[str], float]


_QUESTION_WORD: Rule = (
    "question-word",
    _rx(
        r"^(?:who|what|when|where|why|how|which|whose|is|are|am|was|were|do|does|did|can|could|"
        r"should|would|will|shall|have|has|may)\b[^.!]*$"
    ),
    0.6,
)


_PROVISIONAL: tuple[Rule, ...] = (
    (
        "hedge",
        _rx(
            r"\b(?:maybe|perhaps|might|possibly|probably|not sure|unsure|thinking about|"
            r"thinking of|considering|i guess|i suppose|tempted to|wondering if|wondering whether|"
            r"leaning towards?|toying with|on the fence|could try|could use|could go with|"
            r"might want|not decided|haven't decided|undecided|tentatively)\b"
        ),
        0.5,
    ),
)


_DECISION: tuple[Rule, ...] = (
    (
        "decided",
        _rx(
            rf"\b{_I}(?:'ve| have| had)? (?:finally |just |now )?(?:decided|chose|chosen|picked|"
            r"settled on|opted|agreed|committed)\b|\bdecision\s*:|\bfinal decision\b"
        ),
        0.9,
    ),
    (
        "going-with",
        _rx(
            rf"\b{_I}(?:'ll| will|'m going to| am going to|'re going to| are going to|'re| are|'m|"
            r" am) (?:go(?:ing)? with|us(?:e|ing) |stick(?:ing)? with|switch(?:ing)? to|"
            r"pick(?:ing)? |choos(?:e|ing) |adopt(?:ing)? |mov(?:e|ing) to|migrat(?:e|ing) to|"
            r"standardi[sz](?:e|ing) on)"
        ),
        0.8,
    ),
    (
        "lets",
        _rx(
            r"\blet'?s (?:go with|use|stick with|switch to|pick|choose|adopt|go ahead|keep|drop|"
            r"move to|migrate to|standardi[sz]e on)\b"
        ),
        0.8,
    ),
)


_PREFERENCE: tuple[Rule, ...] = (
    ("favourite", _rx(r"\b(?:my|our) (?:all-time |absolute )?(?:favou?rite|fave)\b"), 0.85),
    (
        "likes",
        _rx(
            rf"\b{_I} (?:really |absolutely |totally |just |also |still |kinda |truly |do |"
            r"don't |do not |never |always )?(?:prefer(?:red)?|like[ds]?|lov(?:e|ed)|enjoy(?:ed)?|"
            r"adore[d]?|hate[d]?|dislike[d]?|despise[d]?)\b|"
            rf"\b{_I}(?:'d| would) (?:rather|prefer|love)\b|"
            rf"\b{_I}(?:'m| am|'re| are) (?:really |a (?:big |huge )?)?"
            r"(?:into|fans? of|obsessed with|not a fan of)\b|\bi can't stand\b"
        ),
        0.8,
    ),
)


_ACTION: tuple[Rule, ...] = (
    (
        "todo",
        _rx(
            r"^(?:todo|to-do|action item|next step)s?\b|\b(?:remember|don't forget|remind me) to\b"
        ),
        0.85,
    ),
    (
        "will",
        _rx(
            rf"\b{_I}(?:'ll| will| shall)\b(?! (?:never|not)\b)|"
            rf"\b{_I}(?:'m| am|'re| are) (?:going to|gonna|planning to|planning on|about to)\b|"
            rf"\b(?:{_I}|you) (?:need|have|got|ought) to\b|\b{_I} should\b(?! not)|"
            rf"\b{_I}(?:'ve| have) got to\b|\b{_I} plan to\b"
        ),
        0.7,
    ),
)


_CONSTRAINT: tuple[Rule, ...] = (
    (
        "imperative",
        _rx(r"^(?:please )?(?:never|always|don't|do not|avoid|make sure|ensure|only)\b"),
        0.75,
    ),
    (
        "modal",
        _rx(
            r"\b(?:must(?:n't| not)?|shouldn't|should not|can't|cannot|can not|not allowed|"
            r"no more than|at most|at least|allergic to|required to|is required|are required|"
            r"has to|have to|only ever|under no circumstances)\b|"
            rf"\b{_I} (?:never|always|don't|do not|won't|will not)\b"
        ),
        0.7,
    ),
)


# Modal phrases that express feelings or knowledge, not constraints.
_NOT_CONSTRAINT = _rx(
    r"\b(?:can't|cannot) (?:wait|believe|imagine|stop|help)\b|"
    r"\b(?:don't|do not) (?:know|think|remember|care|mind|understand|get it|worry)\b|"
    r"\b(?:always|never) (?:wanted|thought|knew|felt|expected|imagined|realized|realised|mind)\b"
)


_ANCHOR = _rx(
    r"\d|\b(?:yesterday|today|tonight|tomorrow|ago|last (?:week|month|year|night|weekend)|"
    r"next (?:week|month|year|weekend)|this (?:morning|week|month|year|weekend)|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|march|april|june|july|august|"
    r"september|october|november|december|(?:my|our) (?:wife|husband|partner|boyfriend|"
    r"girlfriend|sister|brother|mom|mother|dad|father|son|daughter|kids?|children|parents?|"
    r"friends?|boss|colleague|coworker|team|dog|cat|grand\w+|aunt|uncle|cousin|family|job|"
    r"name|birthday|home|house|apartment))\b"
)


_NOT_NAME = frozenset({"i", "i'm", "i've", "i'll", "i'd", "ok", "okay"})


@dataclass(frozen=True)
class FactRules:
    """The fact phrasing of one language (defaults: English). Without it no fact is taken from
    a sentence by its phrasing."""

    #: A clause opening with these is a fragment, not a fact.
    clause_openers: frozenset[str] = CLAUSE_OPENERS
    #: Relative time words a fact anchors to its turn's date.
    relative_time: frozenset[str] = RELATIVE_TIME
    #: "last/next/this" + these: relative time too.
    relative_units: frozenset[str] = RELATIVE_UNITS
    #: Where a sentence splits into clauses ("; ", ", but I …").
    clause_split: re.Pattern[str] = _CLAUSE_SPLIT
    #: Greetings and fillers a unit drops ("Hey Jo, ", "so ").
    leading_markers: re.Pattern[str] = _LEADING_MARKERS
    #: The speaker speaks of themself: a candidate fact.
    first_person: re.Pattern[str] = _FIRST_PERSON
    #: Small talk ("how are you"): no fact.
    small_talk: re.Pattern[str] = _SMALL_TALK
    #: A question.
    question_word: tuple[Rule, ...] = (_QUESTION_WORD,)
    #: Hedged, not decided ("maybe", "thinking about").
    provisional: tuple[Rule, ...] = _PROVISIONAL
    #: Decisions ("we decided", "let's go with").
    decision: tuple[Rule, ...] = _DECISION
    #: Preferences ("I prefer", "I love").
    preference: tuple[Rule, ...] = _PREFERENCE
    #: Action items ("I need to", "I'll").
    action: tuple[Rule, ...] = _ACTION
    #: Constraints ("must", "can't", "budget").
    constraint: tuple[Rule, ...] = _CONSTRAINT
    #: ... but not these ("can't wait").
    not_constraint: re.Pattern[str] = _NOT_CONSTRAINT
    #: A fact's anchor to the world (a number, a date, a place).
    anchor: re.Pattern[str] = _ANCHOR
    #: Capitalised words that are no name ("I'm", "OK").
    not_name: frozenset[str] = _NOT_NAME
