"""Claim phrasing: the first-person statements of a single-valued attribute ("I live in Lyon",
"my boss is Ana") that supersession compares, with the words that disqualify or cut a value."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_CONTRACTIONS = (
    (r"\bI'm\b", "I am"),
    (r"\bwe're\b", "we are"),
    (r"\bI've\b", "I have"),
    (r"\bwe've\b", "we have"),
    (r"\bdon't\b", "do not"),
    (r"\bdont\b", "do not"),
    (r"\bdoesn't\b", "does not"),
    (r"\bisn't\b", "is not"),
    (r"\baren't\b", "are not"),
    (r"\bain't\b", "am not"),
    (r"\bwon't\b", "will not"),
    (r"\bcan't\b", "cannot"),
    (r"\bI'll\b", "I will"),
    (r"\bwe'll\b", "we will"),
    (r"\bI'd\b", "I would"),
    (r"\bwe'd\b", "we would"),
)


_CONTRACTION_RX = tuple((re.compile(p, re.IGNORECASE), r) for p, r in _CONTRACTIONS)


_LEADING = re.compile(
    r"^(?:(?:so|well|oh|ah|anyway|anyways|actually|and|but|btw|by the way|yeah|yep|yes|no|nope|"
    r"ok|okay|hey|hi|hello|hmm|um|uh|update|correction|fyi|guess what|just so you know|"
    r"quick update|oh and|also|now|these days|currently|nowadays)\b[\s,!.:;\-]*)+",
    re.IGNORECASE,
)


_SKIP = re.compile(
    r"\b(?:maybe|might|perhaps|probably|possibly|thinking about|considering|planning|"
    r"plan to|want to|wants to|wanna|would|could|should|if|unless|when|whenever|hope|hoping|"
    r"wish|going to|gonna|someday|one day|used to|previously|formerly|back then|as a kid|"
    r"as a child|grew up|also|too|as well|in addition|pretend|imagine|suppose|dream|dreamt|"
    r"dreamed|not sure|wonder)\b",
    re.IGNORECASE,
)


#: Modal "may" and "will" only in lower case (the month May and the name Will are fine).
_SKIP_CASED = re.compile(r"\b(?:may|will|shall)\b")


_UPDATE = re.compile(
    r"\b(?:now|anymore|any more|no longer|moved|relocated|switched|changed|turned|"
    r"started|these days|instead)\b",
    re.IGNORECASE,
)


_ADV = r"(?:(?:now|currently|still|actually|finally|just|recently|officially|really|already)\s+)*"


_NEG = r"(?P<neg>(?:do\s+not|does\s+not|am\s+not|are\s+not|no\s+longer|not|never)\s+)?"


_VALUE = r"(?P<value>.+)"


_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (name, attribute, re.compile(pattern, re.IGNORECASE))
    for name, attribute, pattern in (
        (
            "residence",
            "residence",
            rf"^(?P<subj>I|we)\s+(?:am\s+|are\s+)?{_ADV}{_NEG}{_ADV}"
            rf"(?:live|living|reside|residing|based)\s+(?:in|at)\s+{_VALUE}$",
        ),
        (
            "residence-move",
            "residence",
            rf"^(?P<subj>I|we)\s+(?:have\s+)?{_ADV}(?:moved|relocated)\s+(?:back\s+)?to\s+{_VALUE}$",
        ),
        (
            "employer",
            "employer",
            rf"^(?P<subj>I|we)\s+(?:am\s+|are\s+)?{_ADV}{_NEG}{_ADV}"
            rf"(?:work|working|employed)\s+(?:at|for|by)\s+{_VALUE}$",
        ),
        (
            "employer-start",
            "employer",
            rf"^(?P<subj>I|we)\s+(?:have\s+)?{_ADV}(?:started\s+(?:working\s+)?at|"
            rf"started\s+a\s+(?:new\s+)?job\s+(?:at|with)|got\s+a\s+(?:new\s+)?job\s+(?:at|with)|"
            rf"took\s+a\s+(?:new\s+)?job\s+(?:at|with)|got\s+hired\s+(?:at|by)|"
            rf"was\s+hired\s+(?:at|by))\s+{_VALUE}$",
        ),
        (
            "occupation",
            "occupation",
            rf"^(?P<subj>I)\s+(?:am\s+)?{_ADV}{_NEG}{_ADV}(?:work|working)\s+as\s+(?:an?\s+)?{_VALUE}$",
        ),
        (
            "age",
            "age",
            rf"^(?P<subj>I)\s+am\s+{_ADV}(?P<value>\d{{1,3}})(?:\s+years?\s+old|\s+yrs?\s+old)\b.*$",
        ),
        (
            "age-turned",
            "age",
            rf"^(?P<subj>I)\s+(?:have\s+)?{_ADV}turned\s+(?P<value>\d{{1,3}})\b.*$",
        ),
        (
            "relationship",
            "relationship status",
            rf"^(?P<subj>I|we)\s+(?:am|are)\s+{_ADV}(?P<neg>not\s+|no\s+longer\s+)?{_ADV}"
            rf"(?P<value>married|single|engaged|divorced|separated|widowed)\b.*$",
        ),
        (
            "relationship-change",
            "relationship status",
            rf"^(?P<subj>I|we)\s+(?:have\s+)?{_ADV}(?:got|gotten)\s+"
            rf"(?P<value>married|engaged|divorced|separated)\b.*$",
        ),
        (
            "attitude",
            "attitude",
            rf"^(?P<subj>I|we)\s+{_ADV}{_NEG}{_ADV}(?:really\s+|absolutely\s+)?"
            rf"(?P<verb>like|love|enjoy|adore|hate|dislike|detest)\s+{_VALUE}$",
        ),
        (
            "attitude-fan",
            "attitude",
            rf"^(?P<subj>I|we)\s+(?:am|are)\s+{_ADV}(?P<neg>not\s+|no\s+longer\s+)?{_ADV}"
            rf"(?:an?\s+)?(?:big\s+|huge\s+|great\s+)?fans?\s+of\s+{_VALUE}$",
        ),
        (
            "possessive",
            "possessive",
            r"^(?P<subj>my|our)\s+(?:new\s+|current\s+|present\s+)?(?P<attr>[a-z][a-z' -]{1,40}?)"
            r"\s+(?:is|has\s+changed\s+to|changed\s+to)\s+"
            r"(?:now\s+|currently\s+|actually\s+|still\s+|officially\s+)*(?P<neg>not\s+)?"
            r"(?P<value>.+)$",
        ),
    )
)


#: Single-valued possessive attributes (head noun). Values may be anything short.
PROPERTY_HEADS = frozenset(
    {
        "name",
        "nickname",
        "colour",
        "food",
        "dish",
        "drink",
        "movie",
        "film",
        "book",
        "author",
        "song",
        "band",
        "artist",
        "singer",
        "genre",
        "sport",
        "team",
        "number",
        "address",
        "email",
        "birthday",
        "age",
        "city",
        "hometown",
        "job",
        "title",
        "role",
        "position",
        "salary",
        "rent",
        "budget",
        "deadline",
        "car",
        "phone",
        "username",
        "language",
        "game",
        "show",
        "series",
        "hobby",
        "restaurant",
        "season",
        "holiday",
        "flower",
        "animal",
        "subject",
        "major",
        "school",
        "university",
        "college",
        "employer",
        "company",
        "timezone",
        "zodiac sign",
        "sign",
        "size",
        "height",
        "weight",
        "diet",
        "breed",
    }
)


#: Possessive attributes that name a person: the value must be a proper name.
PERSON_HEADS = frozenset(
    {
        "boss",
        "manager",
        "partner",
        "husband",
        "wife",
        "boyfriend",
        "girlfriend",
        "fiance",
        "fiancee",
        "doctor",
        "dentist",
        "therapist",
        "landlord",
        "roommate",
        "mentor",
        "coach",
        "teacher",
    }
)


#: Attributes whose value must be a proper name (capitalised where it was written).
PROPER_VALUE_ATTRIBUTES = frozenset({"residence", "employer"})


_VALUE_CUT = re.compile(
    r"\s*(?:[,;:(\u2014\u2013]|\s-\s|\s(?:at|in)\s|\.\s|\bbecause\b|\bsince\b|\bbut\b|\band\s+(?:I|we|it|they|"
    r"he|she|my|our)\b|\bwhich\b|\bwho\b|\bwhere\b|\bwith\b|\bfor\s+(?:the\s+)?(?:past|last|"
    r"about|almost|over|a|an|two|three|\d)\b|\blast\s+(?:week|month|year|night|summer|winter|"
    r"spring|fall|autumn)\b|\bthis\s+(?:week|month|year|summer|winter|spring|fall)\b|"
    r"\ba\s+(?:few|couple)\b|\bin\s+(?:january|february|march|april|may|june|july|august|"
    r"september|october|november|december|\d{4})\b|\bnow\b|\banymore\b|\bany more\b|\bthese days\b|"
    r"\bagain\b|\binstead\b|\bthough\b|\bactually\b|\blol\b|\bhaha\b|\bover\b|\brather than\b|"
    r"\bthan\b|\bat the moment\b|\bright now\b|\btoday\b|\byesterday\b|\brecently\b)",
    re.IGNORECASE,
)


_DETERMINERS = frozenset({"the", "a", "an", "my", "our", "to"})


_PRONOUN_OBJECTS = frozenset(
    {
        "it",
        "that",
        "this",
        "them",
        "you",
        "him",
        "her",
        "those",
        "these",
        "how",
        "what",
        "when",
        "where",
        "why",
        "who",
        "being",
        "everything",
        "nothing",
        "something",
        "anything",
        "doing",
    }
)


_BAD_VALUE_START = frozenset(
    {
        "to",
        "that",
        "so",
        "because",
        "really",
        "very",
        "pretty",
        "quite",
        "too",
        "just",
        "like",
        "about",
        "going",
        "gonna",
        "being",
        "kind",
        "sort",
        "a",
        "an",
        "the",
        "up",
        "in",
        "on",
    }
)


#: A cheap superset test: every rule needs one of these words. The same pattern filters
#: memories in Cypher (``=~``, whole-string match) before their text is transferred.
_CANDIDATE_WORDS = (
    r"my|our|live|living|reside|residing|based|moved|relocated|work|working|employed|job|hired|"
    r"turned|old|married|single|engaged|divorced|separated|widowed|like|love|enjoy|adore|hate|"
    r"dislike|detest|fan|fans"
)


CANDIDATE_PATTERN = rf"(?is).*\b(?:{_CANDIDATE_WORDS})\b.*"


_CANDIDATE = re.compile(rf"\b(?:{_CANDIDATE_WORDS})\b", re.IGNORECASE)


@dataclass(frozen=True)
class ClaimRules:
    """The claim phrasing of one language (defaults: English). Without it no claim is read and
    supersession by claims does nothing."""

    #: Contractions spelled out before matching ("I'm" → "I am").
    contractions: tuple[tuple[re.Pattern[str], str], ...] = _CONTRACTION_RX
    #: Fillers and update markers before a claim ("so", "quick update").
    leading: re.Pattern[str] = _LEADING
    #: Hedged, hypothetical, past or additive clauses: no claim ("maybe", "used to").
    skip: re.Pattern[str] = _SKIP
    #: Modal "may"/"will" in lower case only (May, Will are names).
    skip_cased: re.Pattern[str] = _SKIP_CASED
    #: The clause says the value changed ("moved", "no longer").
    update: re.Pattern[str] = _UPDATE
    #: (rule, attribute, pattern): one attribute's first-person statements.
    rules: tuple[tuple[str, str, re.Pattern[str]], ...] = _RULES
    #: Single-valued possessive attributes ("my name is …").
    property_heads: frozenset[str] = PROPERTY_HEADS
    #: Possessive attributes that name a person ("my boss is …").
    person_heads: frozenset[str] = PERSON_HEADS
    #: Attributes whose value is a proper name.
    proper_value_attributes: frozenset[str] = PROPER_VALUE_ATTRIBUTES
    #: Where a value ends (", because", "last week").
    value_cut: re.Pattern[str] = _VALUE_CUT
    #: Dropped from a value's start when comparing.
    determiners: frozenset[str] = _DETERMINERS
    #: A value that is a pronoun is no value ("I love it").
    pronoun_objects: frozenset[str] = _PRONOUN_OBJECTS
    #: A value opening so is no value ("I like to …").
    bad_value_start: frozenset[str] = _BAD_VALUE_START
    #: Every rule needs one of these words (a fast prefilter).
    candidate: re.Pattern[str] = _CANDIDATE
    #: The same as a Java regex for Cypher's whole-string ``=~``.
    candidate_pattern: str = CANDIDATE_PATTERN
    #: Attitude verbs of disliking: the claim is negative.
    disliking_verbs: frozenset[str] = frozenset({"hate", "dislike", "detest"})
    #: Spellings made one ("favorite" → "favourite").
    spellings: dict[str, str] = field(
        default_factory=lambda: {"favorite": "favourite", "color": "colour"}
    )
