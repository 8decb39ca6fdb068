"""Time expressions in a query, resolved against the question time: "last March", "3 weeks
ago", "before May 2023", "recently", ... become concrete :class:`TimeConstraint` windows
(:func:`resolve_time_expressions`). Pure and deterministic; also the month vocabulary the
rest of query understanding shares (:data:`DATE_RE`, :data:`MONTH_NAMES`).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Literal

from pipelines.recall.config import DEFAULT_RECALL_CONFIG

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
    return MONTHS[match.group("mon").lower()]


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
    recent_window: timedelta = timedelta(days=DEFAULT_RECALL_CONFIG.query.recent_window_days),
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
