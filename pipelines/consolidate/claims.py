"""Claims: single-valued statements a speaker makes about themselves, found by narrow rules.

The automatic supersession job only ever retires something when a *later* claim of the *same
speaker* about the *same attribute* has a *different value or polarity*. This module finds such
claims in text, deterministically and conservatively (false retirements are what users of
peer systems complain about most, so a claim is only extracted when a rule is sure):

* the clause starts with a first-person subject (``I``/``we``, ``my``/``our``); claims made
  with ``we`` only ever conflict with other ``we`` claims;
* questions, hedged, conditional, future and habitual-past clauses ("maybe", "if", "will",
  "used to", "when I was") and additive ones ("also", "too", "as well") are skipped;
* attributes: residence ("I live in X", "I moved to X"), employer ("I work at/for X", "I
  started working at X", "I got a job at X"), occupation ("I work as a X"), age ("I'm 30 years
  old", "I just turned 31"), relationship status ("I'm married", "I got engaged"), attitudes
  ("I like/love/hate X", "I'm a big fan of X", with negation) and possessive attributes
  ("my favourite colour is X", "my phone number is X", "my boss is X") from an allow-list of
  single-valued nouns;
* places, employers and people must be proper names (capitalised in the original text), so
  "I moved to a bigger flat" or "my boss is great" never count.

Values are compared with :func:`same_value` (normalised, token containment counts as equal:
"Berlin" = "Berlin, Germany").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from spacy.lang.en.stop_words import STOP_WORDS

from pipelines.ingest.facts import split_clauses
from pipelines.ingest.text import match_tokens, split_sentences, strip_code_blocks

__all__ = [
    "CANDIDATE_PATTERN",
    "Claim",
    "claim_coverage",
    "content_words",
    "extract_claims",
    "might_claim",
    "same_value",
]


@dataclass(frozen=True, slots=True)
class Claim:
    attribute: str
    """``"<subject>:<attribute>"``, e.g. ``"i:residence"``, ``"i:favourite colour"``,
    ``"we:employer"``, ``"i:attitude:sushi"``."""
    value: str
    """Normalised value ("" for attitudes, whose polarity is the value)."""
    positive: bool
    update: bool
    """The clause says the value changed ("moved to", "now", "anymore", "turned")."""
    rule: str
    clause: str
    display_value: str = ""
    """The value as written."""


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
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'"})

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
_MAX_VALUE_WORDS = 6


def _normalise_clause(clause: str) -> str:
    text = " ".join(clause.translate(_APOSTROPHES).split())
    for rx, repl in _CONTRACTION_RX:
        text = rx.sub(repl, text)
    previous = None
    while previous != text:
        previous = text
        text = _LEADING.sub("", text).strip()
    return text.rstrip(" .!;:,\"'")


def _cut_value(value: str) -> str:
    m = _VALUE_CUT.search(value)
    if m:
        value = value[: m.start()]
    return value.strip(" .!;:,\"'")


def _norm_value(value: str) -> str:
    tokens = match_tokens(value)
    while tokens and tokens[0] in _DETERMINERS:
        tokens = tokens[1:]
    return " ".join(tokens)


def _canonical_attr(attr: str) -> str:
    words = match_tokens(attr.replace("'s", " s"))
    words = ["favourite" if w == "favorite" else "colour" if w == "color" else w for w in words]
    return " ".join(words)


def _is_proper(value: str) -> bool:
    first = value.strip()[:1]
    return bool(first) and first.isupper()


def _claim(clause: str) -> Claim | None:
    text = _normalise_clause(clause)
    if not text or text.endswith("?") or _SKIP.search(text) or _SKIP_CASED.search(text):
        return None
    for rule, attribute, rx in _RULES:
        m = rx.match(text)
        if not m:
            continue
        subject = "we" if m.group("subj").casefold() in ("we", "our") else "i"
        groups = m.groupdict()
        raw = _cut_value(m.group("value"))
        if not raw:
            return None
        words = raw.split()
        if len(words) > _MAX_VALUE_WORDS:
            return None
        positive = not groups.get("neg")
        update = bool(_UPDATE.search(clause)) or rule.endswith(("-move", "-start", "-turned"))
        if attribute == "possessive":
            attr = _canonical_attr(groups["attr"])
            head = attr.split()[-1] if attr else ""
            favourite = attr.startswith("favourite ")
            if head in PERSON_HEADS and not favourite:
                if not _is_proper(raw):
                    return None
            elif head not in PROPERTY_HEADS and not favourite:
                return None
            if words[0].casefold() in _BAD_VALUE_START and not favourite:
                return None
            value = _norm_value(raw)
            if not value:
                return None
            return Claim(f"{subject}:{attr}", value, positive, update, rule, clause, raw)
        if attribute == "attitude":
            obj = _norm_value(raw)
            tokens = obj.split()
            if not tokens or tokens[0] in _PRONOUN_OBJECTS:
                return None
            if not any(t not in STOP_WORDS for t in tokens):
                return None
            verb = (groups.get("verb") or "like").casefold()
            liking = verb not in ("hate", "dislike", "detest")
            return Claim(
                f"{subject}:attitude:{obj}", "", liking == positive, update, rule, clause, raw
            )
        if attribute in PROPER_VALUE_ATTRIBUTES and not _is_proper(raw):
            return None
        if words[0].casefold() in _BAD_VALUE_START and attribute not in ("occupation",):
            return None
        value = _norm_value(raw)
        if not value:
            return None
        return Claim(f"{subject}:{attribute}", value, positive, update, rule, clause, raw)
    return None


#: A cheap superset test: every rule needs one of these words. The same pattern filters
#: memories in Cypher (``=~``, whole-string match) before their text is transferred.
_CANDIDATE_WORDS = (
    r"my|our|live|living|reside|residing|based|moved|relocated|work|working|employed|job|hired|"
    r"turned|old|married|single|engaged|divorced|separated|widowed|like|love|enjoy|adore|hate|"
    r"dislike|detest|fan|fans"
)
CANDIDATE_PATTERN = rf"(?is).*\b(?:{_CANDIDATE_WORDS})\b.*"
_CANDIDATE = re.compile(rf"\b(?:{_CANDIDATE_WORDS})\b", re.IGNORECASE)


def might_claim(text: str) -> bool:
    """False when no rule can match ``text`` (a fast prefilter; True proves nothing)."""
    return bool(_CANDIDATE.search(text))


def extract_claims(text: str) -> list[Claim]:
    """Claims of ``text``, in text order, at most one per attribute (the last one wins)."""
    if not might_claim(text):
        return []
    out: dict[str, Claim] = {}
    for sentence in split_sentences(strip_code_blocks(text)):
        if sentence.rstrip().endswith("?"):
            continue
        for clause in split_clauses(sentence):
            claim = _claim(clause)
            if claim is not None:
                out.pop(claim.attribute, None)
                out[claim.attribute] = claim
    return list(out.values())


def same_value(a: Claim, b: Claim) -> bool:
    """Whether two claims about one attribute agree (same polarity, same or contained value)."""
    if a.positive != b.positive:
        return False
    if a.value == b.value:
        return True
    ta, tb = set(a.value.split()), set(b.value.split())
    return bool(ta and tb) and (ta <= tb or tb <= ta)


def content_words(text: str) -> set[str]:
    tokens = match_tokens(text)
    return {t for t in tokens if t not in STOP_WORDS} or set(tokens)


def claim_coverage(text: str, claims: list[Claim]) -> float:
    """Share of ``text``'s content words that lie in its claims' clauses (0..1)."""
    words = content_words(text)
    if not words:
        return 0.0
    covered: set[str] = set()
    for c in claims:
        covered |= content_words(c.clause)
    return len(words & covered) / len(words)
