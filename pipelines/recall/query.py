"""Query understanding without models: cleaning, keywords, decomposition, Lucene, time.

* :func:`clean_query` — normalise whitespace/control characters and enforce the length cap.
* :func:`extract_keywords` — rule-based keyword extraction (question words and fillers
  stripped; quoted strings, dates, capitalised words and words of length ≥ 4 kept).
* :func:`decompose_query` — split a compound question into targeted sub-queries.
* :func:`build_fulltext_query` — a syntactically safe Lucene query string for the Neo4j
  full-text index (every special character escaped, operators neutralised).
* :func:`find_speakers` — which known speakers/people a query mentions.
* :func:`resolve_time_expressions` — resolve "last March", "3 weeks ago", "before May
  2023", "recently", ... against a reference ``now`` into concrete time windows.

Everything here is pure and deterministic: same input, same output.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Literal

from pipelines.recall.config import DEFAULT_RECALL_CONFIG

# ---------------------------------------------------------------------------------------
# Vocabulary


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Common English function words plus question words and conversational filler.
STOP_WORDS: frozenset[str] = _words(
    """
    a about above across after again against all almost along already also although am
    among an and another any anybody anyone anything anyway anywhere are aren't around as
    at be became because been before being below beside besides between beyond both but by
    can can't cannot could couldn't did didn't do does doesn't doing don't done down during
    each either else enough etc even ever every everybody everyone everything everywhere
    few for from further get gets getting give given go goes going gone got had hadn't has
    hasn't have haven't having he he'd he'll he's her here here's hers herself him himself
    his how how's however i i'd i'll i'm i've if in into is isn't it it's its itself just
    least less let let's like likely many may maybe me might mine more most much must my
    myself neither never no nobody none nor not nothing now nowhere of off often oh ok okay
    on once one only onto or other others otherwise our ours ourselves out over own per
    perhaps please quite rather really same say says said shall she she'd she'll she's
    should shouldn't since so some somebody someone something sometimes somewhere still
    such than that that's the their theirs them themselves then there there's these they
    they'd they'll they're they've thing things this those though through thus to too
    toward towards under until up upon us very via was wasn't we we'd we'll we're we've
    were weren't what what's whatever when when's whenever where where's whereas wherever
    whether which while who who's whoever whole whom whose why why's will with within
    without won't would wouldn't yes yet you you'd you'll you're you've your yours yourself
    yourselves
    hey hi hello thanks thank know remember recall tell think guess wonder stuff kind sort
    lot lots bit actually basically anymore always user assistant mention mentioned talk talked
    describe explain list summarize summarise summary overview recap common together
    happen happens happened happening
    """
)

#: Relative-time words: resolved by :func:`resolve_time_expressions`, not searched for.
#: Dropped only in lower case (so "Mother's Day" or "New Year" survive).
TIME_WORDS: frozenset[str] = _words(
    """
    recently lately recent current currently latest today yesterday tomorrow tonight ago
    last past previous next week weeks weekend month months year years day days time times
    morning afternoon evening night earlier later
    """
)

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
_MONTHS: dict[str, int] = {
    name: number for number, names in enumerate(_MONTH_TABLE, start=1) for name in names
}
#: Full month names (abbreviations such as "Jun" double as given names).
_MONTH_NAMES: frozenset[str] = frozenset(names[0] for names in _MONTH_TABLE)
_MON = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_MON_NC = _MON.replace("(?P<mon>", "(?:")
_MON_FULL = r"(?P<mon>" + "|".join(sorted(_MONTH_NAMES, key=len, reverse=True)) + r")\b"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_DAY_NC = r"\d{1,2}(?:st|nd|rd|th)?"

#: Any absolute date expression (for keeping dates intact as keywords).
_DATE_RE = re.compile(
    rf"\b(?:\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}/\d{{1,2}}/\d{{2,4}}|"
    rf"{_DAY_NC}\s+(?:of\s+)?{_MON_NC}(?:,?\s+\d{{4}})?|"
    rf"{_MON_NC}\s+{_DAY_NC}(?:,?\s+\d{{4}})?(?!\d)|"
    rf"{_MON_NC},?\s+\d{{4}}|(?:19|20)\d{{2}})\b",
    re.IGNORECASE,
)
_QUOTED_RE = re.compile(r'"([^"]*)"|“([^”]*)”')
_WORD_RE = re.compile(r"[^\W_]+(?:[-'’.][^\W_]+)*")
_POSSESSIVE_RE = re.compile(r"['’]s?$", re.IGNORECASE)


def clean_query(text: str, max_chars: int = DEFAULT_RECALL_CONFIG.max_query_chars) -> str:
    """Replace control/format characters by spaces, collapse whitespace, enforce the cap.

    Raises:
        ValueError: if nothing is left or the cleaned text exceeds ``max_chars``.
    """
    printable = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in text)
    cleaned = " ".join(printable.split())
    if not cleaned:
        raise ValueError("query is empty")
    if len(cleaned) > max_chars:
        raise ValueError(f"query is longer than {max_chars} characters")
    return cleaned


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _strip_possessive(word: str) -> str:
    if len(word) > 2 and word[-2:].lower() in {"'s", "’s"}:
        return word[:-2]
    return word.rstrip("'’")


def _is_noise(word: str) -> bool:
    lower = word.casefold()
    return lower in STOP_WORDS or (word.islower() and lower in TIME_WORDS)


def extract_keywords(query: str) -> list[str]:
    """Keywords of ``query`` in order of first appearance, de-duplicated case-insensitively.

    Kept, as written: quoted strings (``"..."`` or curly quotes) as one keyword, date
    expressions ("8 May 2023", "2023-05-08", "May 2023", "2022") as one keyword, then every
    remaining word that is not a stop word / question word / filler (nor a lower-case
    relative-time word) and that contains a digit, starts with a capital letter (likely a
    proper noun) or has at least four characters; a capitalised month name is kept unless
    it opens the query ("May I ..."). Possessive ``'s`` is removed.
    """
    found: list[tuple[int, str]] = []
    quoted = list(_QUOTED_RE.finditer(query))
    for match in quoted:
        inner = " ".join((match.group(1) or match.group(2) or "").split())
        if inner:
            found.append((match.start(), inner))
    rest = _mask(query, (m.span() for m in quoted))
    dates = list(_DATE_RE.finditer(rest))
    found.extend((m.start(), " ".join(m.group(0).split())) for m in dates)
    rest = _mask(rest, (m.span() for m in dates))
    for match in _WORD_RE.finditer(rest):
        word = _strip_possessive(match.group(0))
        if word.casefold() in _MONTH_NAMES and word[0].isupper() and match.start() > 0:
            found.append((match.start(), word))  # "in May": a date, although "may" is a stop word
            continue
        if not word or _is_noise(word):
            continue
        if any(ch.isdigit() for ch in word) or word[0].isupper() or len(word) >= 4:
            found.append((match.start(), word))
    found.sort(key=lambda pair: pair[0])
    seen: set[str] = set()
    keywords: list[str] = []
    for _, word in found:
        key = word.casefold()
        if key not in seen:
            seen.add(key)
            keywords.append(word)
    return keywords


# ---------------------------------------------------------------------------------------
# Decomposition

_NAME_TOKEN = r"[A-Z][\w'’-]*"
_NAME_GROUP_RE = re.compile(
    rf"\b{_NAME_TOKEN}(?:\s*,\s*{_NAME_TOKEN})*\s*,?\s+(?:and|or|&)\s+{_NAME_TOKEN}\b"
)
_NAME_SPLIT_RE = re.compile(r"\s*,\s*(?:(?:and|or|&)\s+)?|\s+(?:and|or|&)\s+")
_ALTERNATIVE_RE = re.compile(r"\b([\w'’-]+)\s+(?:or|vs\.?|versus)\s+([\w'’-]+)\b", re.IGNORECASE)
_BETWEEN_RE = re.compile(
    r"\b(?:differences?|relationship|connection|similarit(?:y|ies)|compar(?:e|ison))\s+"
    r"(?:between|of)\s+(.+?)\s+(?:and|with|to|vs\.?|versus)\s+(.+?)(?=[?.!,;]|$)",
    re.IGNORECASE,
)
_COMPARE_RE = re.compile(r"\bcompare\s+(.+?)\s+(?:and|with|to)\s+(.+?)(?=[?.!,;]|$)", re.IGNORECASE)
_SEQUENCE_SPLIT_RE = re.compile(r"\s*(?:,\s*)?\b(?:before|after|then|and\s+then)\b\s*", re.I)
_PLURAL_FILLERS_RE = re.compile(r"\s+\b(?:both|each|together)\b", re.IGNORECASE)


def _tidy(text: str) -> str:
    text = " ".join(text.split())
    text = re.sub(r"\s+([?.!,;:])", r"\1", text)
    return text.strip(" ,;:")


def _has_content(text: str) -> bool:
    """True when ``text`` has a keyword that is not a pure date expression."""
    return any(not _DATE_RE.fullmatch(keyword) for keyword in extract_keywords(text))


def _name_variants(segment: str) -> list[str]:
    variants: list[str] = []
    for match in _NAME_GROUP_RE.finditer(segment):
        names = [name for name in _NAME_SPLIT_RE.split(match.group(0)) if name]
        names = [name for name in names if not _is_noise(name)]
        if len(names) < 2:
            continue
        for name in names:
            variant = segment[: match.start()] + name + segment[match.end() :]
            variants.append(_tidy(_PLURAL_FILLERS_RE.sub("", variant)))
    return variants


def _alternative_variants(segment: str) -> list[str]:
    variants: list[str] = []
    for pattern in (_BETWEEN_RE, _COMPARE_RE):
        for match in pattern.finditer(segment):
            variants.extend(_tidy(match.group(i)) for i in (1, 2))
    for match in _ALTERNATIVE_RE.finditer(segment):
        left, right = match.group(1), match.group(2)
        if _is_noise(left) or _is_noise(right):
            continue
        for choice in (left, right):
            variants.append(_tidy(segment[: match.start()] + choice + segment[match.end() :]))
    return variants


def _sequence_variants(segment: str) -> list[str]:
    parts = [_tidy(part) for part in _SEQUENCE_SPLIT_RE.split(segment)]
    parts = [part for part in parts if part]
    if len(parts) < 2 or not all(_has_content(part) for part in parts):
        return []
    return parts


def decompose_query(
    query: str, max_queries: int = DEFAULT_RECALL_CONFIG.max_subqueries
) -> list[str]:
    """Split a compound question into targeted sub-queries (no model involved).

    The result always starts with the cleaned original query, followed by sub-queries from
    these rules, in order: several questions (split after ``?`` and at ``;``);
    coordinated names ("Jon and Gina both ..." → one variant per name, with "both" /
    "each" / "together" removed); comparisons ("difference between X and Y", "compare X
    with Y" → X, Y; "tea or coffee" → one variant per alternative); sequences ("X
    before/after/then Y" → X, Y, only when each part has a non-date keyword, so "after May
    2023" is not split). Sub-queries without a (non-date) keyword are dropped, duplicates
    are removed case-insensitively, and at most ``max_queries`` strings are returned.
    """
    if max_queries < 1:
        raise ValueError("max_queries must be >= 1")
    original = _tidy(query)
    if not original:
        return []
    candidates = [original]
    segments = [_tidy(s) for s in re.split(r"(?<=\?)\s*|\s*;\s*", original)]
    segments = [s for s in segments if _has_content(s)]
    if len(segments) > 1:
        candidates.extend(segments)
    for segment in segments or [original]:
        candidates.extend(_name_variants(segment))
        candidates.extend(_alternative_variants(segment))
        candidates.extend(_sequence_variants(segment))
    result: list[str] = []
    seen: set[str] = set()
    for candidate in candidates:
        key = candidate.casefold().rstrip("?.! ")
        if candidate and key not in seen and _has_content(candidate):
            seen.add(key)
            result.append(candidate)
    if not result:
        result = [original]
    return result[:max_queries]


# ---------------------------------------------------------------------------------------
# Lucene

#: Characters with a meaning in Lucene's classic query syntax (``&&``/``||`` are covered
#: by escaping ``&`` and ``|`` individually).
LUCENE_SPECIAL_CHARS: frozenset[str] = frozenset('\\+-!():^[]"{}~*?|&/')
_EDGE_PUNCTUATION = ".,;:!?'\"“”‘’()[]{}<>«»`"
MIN_PHRASE_BOOST = 0.001
MAX_PHRASE_BOOST = 1000.0


_TRAILING = " \t\r\n\"'“”‘’)]}»"


def ends_with_question(text: str) -> bool:
    """Whether ``text`` ends by asking a question ("Wow, great! What did you paint?"), closing
    quotes and brackets aside. A turn that only asks in passing ("Did I tell you? I got the
    job.") does not."""
    return text.rstrip(_TRAILING).endswith(("?", "？"))


def escape_lucene(term: str) -> str:
    """Backslash-escape every Lucene special character in ``term``."""
    return "".join("\\" + ch if ch in LUCENE_SPECIAL_CHARS else ch for ch in term)


def _lucene_token(raw: str) -> str | None:
    token = "".join(ch for ch in raw if ch.isprintable() and not ch.isspace())
    token = _strip_possessive(token.strip(_EDGE_PUNCTUATION)).strip(_EDGE_PUNCTUATION)
    if not any(ch.isalnum() for ch in token):
        return None
    # Lower case neutralises the AND/OR/NOT/TO operators (they only exist in upper case).
    return escape_lucene(token.lower())


def build_fulltext_query(
    text: str,
    max_terms: int = DEFAULT_RECALL_CONFIG.fulltext_max_terms,
    phrase_boost: float = DEFAULT_RECALL_CONFIG.fulltext_phrase_boost,
) -> str | None:
    """A safe Lucene query: boosted quoted phrases and single terms joined with ``OR``.

    Quoted strings of two or more words become phrase clauses ``"w1 w2"^boost``; the other
    words become single-term clauses, minus stop words and lower-case relative-time words
    (a capitalised month name that does not open the text is kept: "in May").
    Every term is lower-cased (so ``AND``/``OR``/``NOT``/``TO`` lose their operator
    meaning) and every Lucene special character in it is backslash-escaped; the only
    unescaped syntax in the output is the phrase quotes, the boosts and the ``OR``
    separators. Clauses are de-duplicated and capped at ``max_terms``. Returns ``None``
    when nothing searchable is left.
    """
    if max_terms <= 0:
        raise ValueError("max_terms must be positive")
    if not MIN_PHRASE_BOOST <= phrase_boost <= MAX_PHRASE_BOOST:
        raise ValueError(f"phrase_boost must be in [{MIN_PHRASE_BOOST}, {MAX_PHRASE_BOOST}]")
    # Fixed-point, never exponent notation: "1e-05" would smuggle in an unescaped "-".
    boost = f"{phrase_boost:.3f}".rstrip("0").rstrip(".")
    clauses: list[str] = []
    quoted = list(_QUOTED_RE.finditer(text))
    for match in quoted:
        words = [_lucene_token(raw) for raw in (match.group(1) or match.group(2) or "").split()]
        kept = [word for word in words if word]
        if len(kept) >= 2:
            clauses.append(f'"{" ".join(kept)}"^{boost}')
        elif kept:
            clauses.append(kept[0])
    for position, raw in enumerate(_mask(text, (m.span() for m in quoted)).split()):
        stripped = _strip_possessive(raw.strip(_EDGE_PUNCTUATION))
        is_month = position > 0 and stripped[:1].isupper() and stripped.casefold() in _MONTH_NAMES
        if not stripped or (_is_noise(stripped) and not is_month):
            continue
        token = _lucene_token(raw)
        if token and (len(stripped) > 1 or stripped.isdigit()):
            clauses.append(token)
    unique = list(dict.fromkeys(clauses))[:max_terms]
    return " OR ".join(unique) if unique else None


def scope_fulltext_query(query: str, space_tag: str, field: str = "text") -> str:
    """Restrict a :func:`build_fulltext_query` query to one space inside Lucene.

    The space clause is required but boosted to zero, so it filters without adding to the
    score (scores stay comparable to an unscoped query's); the query's clauses search only
    ``field`` (``text`` for memories, ``texts`` for session documents). ``space_tag`` is
    :func:`pipelines.spaces.fulltext_tag` (letters and digits only: nothing to escape,
    checked here anyway).
    """
    if not space_tag.isalnum():
        raise ValueError("space_tag must be letters and digits only")
    if not field.isidentifier():
        raise ValueError("field must be an identifier")
    return f"+space_tag:{space_tag}^0 +{field}:({query})"


# ---------------------------------------------------------------------------------------
# Speakers


def _speaker_spans(query: str, known_speakers: Iterable[str]) -> list[tuple[int, int, str]]:
    """``(start, end, name)`` of every mention of a known speaker, in query order."""
    names = sorted(
        {" ".join(name.split()) for name in known_speakers if name.strip()},
        key=lambda name: (-len(name), name),
    )
    taken: list[tuple[int, int, str]] = []
    for name in names:
        body = r"\s+".join(re.escape(part) for part in name.split())
        pattern = re.compile(rf"(?<![\w]){body}(?:['’]s?)?(?![\w])", re.IGNORECASE)
        for match in pattern.finditer(query):
            start, end = match.span()
            if any(start < t_end and t_start < end for t_start, t_end, _ in taken):
                continue
            taken.append((start, end, name))
    return sorted(taken)


def find_speakers(query: str, known_speakers: Iterable[str]) -> list[str]:
    """Known speakers mentioned in ``query``, in order of first mention.

    Matching is case-insensitive on whole words, tolerates any whitespace inside
    multi-word names and possessives ("Caroline's", "James'"). Longer names win over
    names they contain ("Jon Snow" over "Jon" at the same place). Returned names use the
    spelling of ``known_speakers``; blank names are ignored.
    """
    return list(dict.fromkeys(name for _, _, name in _speaker_spans(query, known_speakers)))


def strip_speakers(query: str, known_speakers: Iterable[str]) -> str:
    """``query`` without its mentions of known speakers (possessives included), tidied.

    A memory's own speaker is a property, not part of its text ("I researched adoption
    agencies" is Caroline's turn), so a name in the question matches only the turns that
    *address* that person ("Wow, Caroline!"). Searching the content without the name, and
    boosting the named speaker's turns instead, avoids that trap. Returns the query
    unchanged when nothing searchable (no word but stop words) would be left.
    """
    spans = _speaker_spans(query, known_speakers)
    if not spans:
        return query
    stripped = " ".join(_mask(query, ((start, end) for start, end, _ in spans)).split())
    stripped = re.sub(r"\s+([?.!,;:])", r"\1", stripped)
    return stripped if build_fulltext_query(stripped) is not None else query


# ---------------------------------------------------------------------------------------
# Time expressions

TimeKind = Literal["range", "before", "after"]


@dataclass(frozen=True, slots=True)
class TimeConstraint:
    """A resolved time window; ``start`` inclusive, ``end`` exclusive, ``None`` = open.

    ``kind`` is ``"range"`` (both ends set), ``"before"`` (only ``end``) or ``"after"``
    (only ``start``). ``soft`` marks vague expressions ("recently") that should boost
    rather than filter. ``text`` is the matched query text.
    """

    start: datetime | None
    end: datetime | None
    text: str
    kind: TimeKind
    soft: bool = False

    def contains(self, moment: datetime) -> bool:
        """Whether ``moment`` lies in ``[start, end)``."""
        if self.start is not None and moment < self.start:
            return False
        return self.end is None or moment < self.end


Period = tuple[datetime, datetime]

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


def _parse_number(text: str) -> int:
    words = text.lower().split()
    if words[0].isdigit():
        return int(words[0])
    for word in words:
        if word in _NUMBER_WORDS and word not in {"a", "an", "of"}:
            return _NUMBER_WORDS[word]
    return _NUMBER_WORDS[words[0]]


def _at(year: int, month: int, day: int, tz: tzinfo | None) -> datetime:
    return datetime(year, month, day, tzinfo=tz)


def _add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _day_period(year: int, month: int, day: int, tz: tzinfo | None) -> Period:
    start = _at(year, month, day, tz)
    return start, start + timedelta(days=1)


def _month_period(year: int, month: int, tz: tzinfo | None) -> Period:
    next_year, next_month = _add_months(year, month, 1)
    return _at(year, month, 1, tz), _at(next_year, next_month, 1, tz)


def _year_period(year: int, tz: tzinfo | None) -> Period:
    return _at(year, 1, 1, tz), _at(year + 1, 1, 1, tz)


def _midnight(now: datetime) -> datetime:
    return _at(now.year, now.month, now.day, now.tzinfo)


def _week_period(moment: datetime) -> Period:
    """The ISO (Monday-first) calendar week containing ``moment``."""
    start = _midnight(moment) - timedelta(days=moment.weekday())
    return start, start + timedelta(days=7)


def _shift_months(moment: datetime, delta: int) -> datetime:
    year, month = _add_months(moment.year, moment.month, delta)
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return moment.replace(year=year, month=month, day=day)


def _calendar_period(unit: str, moment: datetime) -> Period:
    tz = moment.tzinfo
    if unit == "day":
        return _day_period(moment.year, moment.month, moment.day, tz)
    if unit == "week":
        return _week_period(moment)
    if unit == "month":
        return _month_period(moment.year, moment.month, tz)
    return _year_period(moment.year, tz)


def _shift(now: datetime, unit: str, amount: int) -> datetime:
    if unit == "day":
        return now - timedelta(days=amount)
    if unit == "week":
        return now - timedelta(weeks=amount)
    if unit == "month":
        return _shift_months(now, -amount)
    return _shift_months(now, -12 * amount)


def _infer_year(month: int, day: int, now: datetime) -> int:
    """The year of the most recent ``month``/``day`` that is not after ``now``."""
    return now.year if (month, day) <= (now.month, now.day) else now.year - 1


def _month_number(match: re.Match[str]) -> int:
    return _MONTHS[match.group("mon").lower()]


#: ``resolve(match, now, recent_window)`` → the matched period, or ``None`` to reject.
Resolver = Callable[[re.Match[str], datetime, timedelta], "Period | None"]


@dataclass(frozen=True, slots=True)
class _Pattern:
    regex: re.Pattern[str]
    resolve: Resolver
    needs_prep: bool = False
    soft: bool = False


def _p(
    pattern: str,
    resolve: Resolver,
    *,
    needs_prep: bool = False,
    soft: bool = False,
) -> _Pattern:
    return _Pattern(re.compile(pattern, re.IGNORECASE), resolve, needs_prep, soft)


def _iso(m: re.Match[str], now: datetime, _recent: timedelta) -> Period:
    return _day_period(int(m["y"]), int(m["m"]), int(m["d"]), now.tzinfo)


def _day_with_year(m: re.Match[str], now: datetime, _recent: timedelta) -> Period:
    return _day_period(int(m["y"]), _month_number(m), int(m["day"]), now.tzinfo)


def _day_without_year(m: re.Match[str], now: datetime, _recent: timedelta) -> Period:
    month, day = _month_number(m), int(m["day"])
    return _day_period(_infer_year(month, day, now), month, day, now.tzinfo)


def _month_with_year(m: re.Match[str], now: datetime, _recent: timedelta) -> Period:
    return _month_period(int(m["y"]), _month_number(m), now.tzinfo)


def _year(m: re.Match[str], now: datetime, _recent: timedelta) -> Period:
    return _year_period(int(m["y"]), now.tzinfo)


def _last_month_name(m: re.Match[str], now: datetime, _recent: timedelta) -> Period:
    month = _month_number(m)
    year = now.year if month < now.month else now.year - 1
    return _month_period(year, month, now.tzinfo)


def _bare_month(m: re.Match[str], now: datetime, _recent: timedelta) -> Period | None:
    word = m["mon"]
    if word.lower() in {"may", "march", "mar"} and not word[0].isupper():
        return None  # the verbs "may" / "march"
    month = _month_number(m)
    year = now.year if month <= now.month else now.year - 1
    return _month_period(year, month, now.tzinfo)


def _relative_day(m: re.Match[str], now: datetime, _recent: timedelta) -> Period:
    word = " ".join(m.group(0).lower().split())
    offset = {"yesterday": -1, "tomorrow": 1, "the day before yesterday": -2}.get(word, 0)
    day = _midnight(now) + timedelta(days=offset)
    return _day_period(day.year, day.month, day.day, now.tzinfo)


def _weekend(now: datetime, weeks_back: int) -> Period:
    monday = _week_period(now)[0] - timedelta(weeks=weeks_back)
    saturday = monday + timedelta(days=5)
    return saturday, monday + timedelta(days=7)


def _last_period(m: re.Match[str], now: datetime, _recent: timedelta) -> Period:
    unit, word = m["unit"].lower(), m["which"].lower()
    if unit == "weekend":
        return _weekend(now, 1)
    if word == "past":  # "the past week": a rolling window ending now
        return _shift(now, unit, 1), now
    return _calendar_period(unit, _shift(now, unit, 1))


def _this_period(m: re.Match[str], now: datetime, _recent: timedelta) -> Period:
    unit = m["unit"].lower()
    if unit == "weekend":
        return _weekend(now, 0)
    return _calendar_period(unit, now)


def _last_n(m: re.Match[str], now: datetime, _recent: timedelta) -> Period:
    return _shift(now, m["unit"].lower(), _parse_number(m["n"])), now


def _ago(m: re.Match[str], now: datetime, _recent: timedelta) -> Period:
    unit = m["unit"].lower()
    return _calendar_period(unit, _shift(now, unit, _parse_number(m["n"])))


def _recently(_: re.Match[str], now: datetime, recent: timedelta) -> Period:
    return now - recent, now


_PATTERNS: tuple[_Pattern, ...] = (
    _p(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b", _iso),
    _p(rf"\b{_DAY}\s+(?:of\s+)?{_MON},?\s+(?P<y>\d{{4}})\b", _day_with_year),
    _p(rf"\b{_MON}\s+{_DAY},?\s+(?P<y>\d{{4}})\b", _day_with_year),
    _p(rf"\b{_MON},?\s+(?:of\s+)?(?P<y>\d{{4}})\b", _month_with_year),
    _p(rf"\b{_DAY}\s+(?:of\s+)?{_MON}\b", _day_without_year),
    _p(rf"\b{_MON}\s+{_DAY}\b(?!\s*,?\s*\d)", _day_without_year),
    _p(r"\b(?P<y>(?:19|20)\d{2})\b", _year, needs_prep=True),
    _p(rf"\b(?:last|past|previous)\s+{_MON_FULL}", _last_month_name),
    _p(rf"\b{_MON_FULL}", _bare_month, needs_prep=True),
    _p(
        r"\b(?:the\s+day\s+before\s+yesterday|yesterday|today|tonight|tomorrow|"
        r"this\s+(?:morning|afternoon|evening))\b",
        _relative_day,
    ),
    _p(r"\b(?P<which>last|previous|past)\s+(?P<unit>week|weekend|month|year)\b", _last_period),
    _p(r"\b(?:this|current)\s+(?P<unit>week|weekend|month|year)\b", _this_period),
    _p(
        rf"\b(?:(?:in|over|during|for)\s+)?(?:the\s+)?(?:last|past|previous)\s+{_NUM}\s+{_UNIT}\b",
        _last_n,
    ),
    _p(rf"\b{_NUM}\s+{_UNIT}\s+ago\b", _ago),
    _p(
        r"\b(?:recently|lately|these\s+days|in\s+recent\s+(?:days|weeks|months|times))\b",
        _recently,
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


@dataclass(slots=True)
class _Hit:
    start: int
    end: int
    period: Period
    soft: bool
    prep: str | None = None
    prep_start: int = 0


def _find_hits(query: str, now: datetime, recent: timedelta) -> list[_Hit]:
    raw: list[tuple[int, int, _Pattern, re.Match[str]]] = []
    for pattern in _PATTERNS:
        raw.extend((m.start(), m.end(), pattern, m) for m in pattern.regex.finditer(query))
    raw.sort(key=lambda item: (item[0], -(item[1] - item[0])))
    hits: list[_Hit] = []
    last_end = -1
    for start, end, pattern, match in raw:
        if start < last_end:
            continue
        try:
            period = pattern.resolve(match, now, recent)
        except ValueError:  # e.g. 31 February
            continue
        if period is None:
            continue
        prep_match = _PREP_RE.search(query, 0, start)
        prep = None
        prep_start = start
        if prep_match is not None:
            prep = " ".join((prep_match["prep"] or prep_match["dash"]).lower().split())
            prep_start = prep_match.start()
        continues_range = prep in _CONNECTORS and bool(hits) and hits[-1].prep in _OPENERS
        if pattern.needs_prep and (prep is None or prep in _CONNECTORS) and not continues_range:
            continue
        hits.append(_Hit(start, end, period, pattern.soft, prep, prep_start))
        last_end = end
    return hits


def _constraint(hit: _Hit, text: str) -> TimeConstraint:
    start, end = hit.period
    prep = hit.prep
    if prep in {"before", "prior to", "earlier than"}:
        return TimeConstraint(None, start, text, "before", hit.soft)
    if prep in {"until", "till", "up to", "through", "by"}:
        return TimeConstraint(None, end, text, "before", hit.soft)
    if prep in {"after", "later than"}:
        return TimeConstraint(end, None, text, "after", hit.soft)
    if prep in {"since", "from"}:
        return TimeConstraint(start, None, text, "after", hit.soft)
    return TimeConstraint(start, end, text, "range", hit.soft)


def resolve_time_expressions(
    query: str,
    now: datetime,
    recent_window: timedelta = timedelta(days=DEFAULT_RECALL_CONFIG.recent_window_days),
) -> list[TimeConstraint]:
    """Resolve the time expressions of ``query`` relative to ``now``, in query order.

    Periods (all computed in ``now``'s timezone, naive if ``now`` is naive):

    * "today" / "yesterday" / "the day before yesterday" / "tomorrow": that calendar day;
    * "last week|month|year" / "previous ...": the previous calendar period (weeks start
      on Monday); "the past week|month|year": the rolling period ending ``now``;
      "this|current week|month|year": the current calendar period; "last weekend";
    * "(in) the last|past N days|weeks|months|years": rolling window ending ``now``;
    * "N days|weeks|months|years ago" (also "a", "a few", "a couple of", word numbers):
      the calendar day/week/month/year containing ``now − N units``;
    * "8 May 2023", "May 8, 2023", "2023-05-08": that day; "May 8" / "8th of May": the
      most recent such day not after ``now``; "May 2023": that month; "last March": the
      most recent March strictly before the current month; "in May": the most recent May
      (the current month counts); "in 2022": that year. Bare months and years need a
      preposition, to avoid reading the verb "may" or a plain number as dates;
    * "recently" / "lately" / "these days": ``[now − recent_window, now)``, ``soft=True``.

    A preceding word turns a period ``[s, e)`` into a constraint: before/prior to →
    ``before e=s``; until/by/through → ``before e=e``; after → ``after s=e``; since/from
    → ``after s=s``; otherwise a ``range``. "between X and Y" / "from X to Y" merge into
    one range ``[X.s, Y.e)``. Overlapping matches keep the earliest, then longest.
    """
    hits = _find_hits(query, now, recent_window)
    constraints: list[TimeConstraint] = []
    index = 0
    while index < len(hits):
        hit = hits[index]
        following = hits[index + 1] if index + 1 < len(hits) else None
        if (
            following is not None
            and hit.prep in _OPENERS
            and following.prep in _CONNECTORS
            and not query[hit.end : following.prep_start].strip()
        ):
            text = query[hit.prep_start : following.end]
            start, end = hit.period[0], following.period[1]
            constraints.append(TimeConstraint(start, end, text, "range", hit.soft))
            index += 2
            continue
        constraints.append(_constraint(hit, query[hit.prep_start : hit.end]))
        index += 1
    return constraints
