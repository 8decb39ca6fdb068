"""Time words: month names, number words, the shapes of date and relative-time expressions and
the prepositions that turn a period into a bound ("before May"). The resolvers that turn a
match into a period are :mod:`pipelines.recall.time_expressions`'s, named by each pattern."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_MONTH_TABLE: tuple[tuple[str, ...], ...] = (
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("may",),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sept", "sep"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
)


MONTHS: dict[str, int] = {
    name: number for number, names in enumerate(_MONTH_TABLE, start=1) for name in names
}


#: Full month names (abbreviations such as "Jun" double as given names).
MONTH_NAMES: frozenset[str] = frozenset(names[0] for names in _MONTH_TABLE)


_MON = r"(?P<mon>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"


_MON_NC = _MON.replace("(?P<mon>", "(?:")


_MON_FULL = r"(?P<mon>" + "|".join(sorted(MONTH_NAMES, key=len, reverse=True)) + r")\b"


_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"


_DAY_NC = r"\d{1,2}(?:st|nd|rd|th)?"


#: Any absolute date expression (for keeping dates intact as keywords).
DATE_RE = re.compile(
    rf"\b(?:\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}/\d{{1,2}}/\d{{2,4}}|"
    rf"{_DAY_NC}\s+(?:of\s+)?{_MON_NC}(?:,?\s+\d{{4}})?|"
    rf"{_MON_NC}\s+{_DAY_NC}(?:,?\s+\d{{4}})?(?!\d)|"
    rf"{_MON_NC},?\s+\d{{4}}|(?:19|20)\d{{2}})\b",
    re.IGNORECASE,
)


_NUMBER_WORDS: dict[str, int] = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "couple": 2,
    "few": 3,
    "several": 3,
}


_NUM = (
    r"(?P<n>\d{1,3}|(?:a\s+)?(?:couple|few)(?:\s+of)?|"
    + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True))
    + r")"
)


_UNIT = r"(?P<unit>day|week|month|year)s?"


@dataclass(frozen=True, slots=True)
class TimePattern:
    """A time expression's shape and the resolver (by name) that turns a match into a period."""

    regex: re.Pattern[str]
    resolver: str
    needs_prep: bool = False  # a bare month or year counts only after a preposition
    soft: bool = False  # vague ("recently"): boosts rather than filters


def _p(pattern: str, resolver: str, *, needs_prep: bool = False, soft: bool = False) -> TimePattern:
    return TimePattern(re.compile(pattern, re.IGNORECASE), resolver, needs_prep, soft)


#: The time expressions, in the order they are tried (overlaps keep the earliest, longest).
_PATTERNS: tuple[TimePattern, ...] = (
    _p(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b", "iso"),
    _p(rf"\b{_DAY}\s+(?:of\s+)?{_MON},?\s+(?P<y>\d{{4}})\b", "day_with_year"),
    _p(rf"\b{_MON}\s+{_DAY},?\s+(?P<y>\d{{4}})\b", "day_with_year"),
    _p(rf"\b{_MON},?\s+(?:of\s+)?(?P<y>\d{{4}})\b", "month_with_year"),
    _p(rf"\b{_DAY}\s+(?:of\s+)?{_MON}\b", "day_without_year"),
    _p(rf"\b{_MON}\s+{_DAY}\b(?!\s*,?\s*\d)", "day_without_year"),
    _p(r"\b(?P<y>(?:19|20)\d{2})\b", "year", needs_prep=True),
    _p(rf"\b(?:last|past|previous)\s+{_MON_FULL}", "last_month_name"),
    _p(rf"\b{_MON_FULL}", "bare_month", needs_prep=True),
    _p(
        r"\b(?:the\s+day\s+before\s+yesterday|yesterday|today|tonight|tomorrow|"
        r"this\s+(?:morning|afternoon|evening))\b",
        "relative_day",
    ),
    _p(r"\b(?P<which>last|previous|past)\s+(?P<unit>week|weekend|month|year)\b", "last_period"),
    _p(r"\b(?:this|current)\s+(?P<unit>week|weekend|month|year)\b", "this_period"),
    _p(
        rf"\b(?:(?:in|over|during|for)\s+)?(?:the\s+)?(?:last|past|previous)\s+{_NUM}\s+{_UNIT}\b",
        "last_n",
    ),
    _p(rf"\b{_NUM}\s+{_UNIT}\s+ago\b", "ago"),
    _p(
        r"\b(?:recently|lately|these\s+days|in\s+recent\s+(?:days|weeks|months|times))\b",
        "recently",
        soft=True,
    ),
)


_PREP_RE = re.compile(
    r"\b(?P<prep>before|prior\s+to|earlier\s+than|until|till|up\s+to|through|by|after|"
    r"later\s+than|since|from|between|in|on|during|of|around|and|to)\s+(?:the\s+)?"
    r"(?:(?:early|late|mid)[\s-]+)?$|(?P<dash>[-–])\s*$",
    re.IGNORECASE,
)


_CONNECTORS = frozenset({"and", "to", "until", "till", "through", "-", "–"})


_OPENERS = frozenset({"between", "from"})


@dataclass(frozen=True)
class TimeRules:
    """The time words of one language (defaults: English)."""

    #: Month name or abbreviation → month number.
    months: dict[str, int] = field(default_factory=lambda: dict(MONTHS))
    #: Full month names: kept as keywords when capitalised ("in May").
    month_names: frozenset[str] = MONTH_NAMES
    #: Month names that are also verbs ("may", "march"): a month only when capitalised.
    verb_months: frozenset[str] = frozenset({"may", "march", "mar"})
    #: Any absolute date, kept whole as a keyword ("8 May 2023").
    date: re.Pattern[str] = DATE_RE
    #: A month and day ("Mar 3"): a dated line in a timeline.
    month_day: re.Pattern[str] = re.compile(
        r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.? \d{1,2}\b",
        re.IGNORECASE,
    )
    #: Number words ("three weeks ago"); "a", "an" and "of" count only alone.
    number_words: dict[str, int] = field(default_factory=lambda: dict(_NUMBER_WORDS))
    filler_numbers: frozenset[str] = frozenset({"a", "an", "of"})
    #: Relative days → offset from today.
    relative_days: dict[str, int] = field(
        default_factory=lambda: {"yesterday": -1, "tomorrow": 1, "the day before yesterday": -2}
    )
    #: The time expressions (without: no time window is resolved, the query is searched as is).
    patterns: tuple[TimePattern, ...] = _PATTERNS
    #: The preposition before an expression ("before", "since", "between").
    prep: re.Pattern[str] = _PREP_RE
    #: Joins two ends of a range ("from May to June"), which opens with one of ``openers``.
    connectors: frozenset[str] = _CONNECTORS
    openers: frozenset[str] = _OPENERS
    #: Prepositions → bound: before the start, before the end, after the end, after the start.
    before_start: frozenset[str] = frozenset({"before", "prior to", "earlier than"})
    before_end: frozenset[str] = frozenset({"until", "till", "up to", "through", "by"})
    after_end: frozenset[str] = frozenset({"after", "later than"})
    after_start: frozenset[str] = frozenset({"since", "from"})
