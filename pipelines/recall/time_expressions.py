"""Time expressions in a query, resolved against the question time: "last March", "3 weeks
ago", "before May 2023", "recently", ... become concrete :class:`TimeConstraint` windows
(:func:`resolve_time_expressions`). Pure and deterministic; also the month vocabulary the
rest of query understanding shares (:func:`date_pattern`, :func:`month_names`); the words and
shapes are :mod:`pipelines.language.time`'s.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Literal

from pipelines.language import current
from pipelines.language.time import TimePattern
from pipelines.recall.config import DEFAULT_RECALL_CONFIG

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


def date_pattern() -> re.Pattern[str]:
    """Any absolute date expression, in the active language."""
    return current().time.date


def month_names() -> frozenset[str]:
    """The full month names of the active language (lower case)."""
    return current().time.month_names


def _parse_number(text: str) -> int:
    rules = current().time
    words = text.lower().split()
    if words[0].isdigit():
        return int(words[0])
    for word in words:
        if word in rules.number_words and word not in rules.filler_numbers:
            return rules.number_words[word]
    return rules.number_words[words[0]]


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
    return current().time.months[match.group("mon").lower()]


#: ``resolve(match, now, recent_window)`` → the matched period, or ``None`` to reject.
Resolver = Callable[[re.Match[str], datetime, timedelta], "Period | None"]


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
    if word.lower() in current().time.verb_months and not word[0].isupper():
        return None  # the verbs "may" / "march"
    month = _month_number(m)
    year = now.year if month <= now.month else now.year - 1
    return _month_period(year, month, now.tzinfo)


def _relative_day(m: re.Match[str], now: datetime, _recent: timedelta) -> Period:
    word = " ".join(m.group(0).lower().split())
    offset = current().time.relative_days.get(word, 0)
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


#: The resolvers :class:`~pipelines.language.time.TimePattern` names.
_RESOLVERS: dict[str, Resolver] = {
    "iso": _iso,
    "day_with_year": _day_with_year,
    "day_without_year": _day_without_year,
    "month_with_year": _month_with_year,
    "year": _year,
    "last_month_name": _last_month_name,
    "bare_month": _bare_month,
    "relative_day": _relative_day,
    "last_period": _last_period,
    "this_period": _this_period,
    "last_n": _last_n,
    "ago": _ago,
    "recently": _recently,
}


@dataclass(slots=True)
class _Hit:
    start: int
    end: int
    period: Period
    soft: bool
    prep: str | None = None
    prep_start: int = 0


def _find_hits(query: str, now: datetime, recent: timedelta) -> list[_Hit]:
    rules = current().time
    raw: list[tuple[int, int, TimePattern, re.Match[str]]] = []
    for pattern in rules.patterns:
        raw.extend((m.start(), m.end(), pattern, m) for m in pattern.regex.finditer(query))
    raw.sort(key=lambda item: (item[0], -(item[1] - item[0])))
    hits: list[_Hit] = []
    last_end = -1
    for start, end, pattern, match in raw:
        if start < last_end:
            continue
        try:
            period = _RESOLVERS[pattern.resolver](match, now, recent)
        except ValueError:  # e.g. 31 February
            continue
        if period is None:
            continue
        prep_match = rules.prep.search(query, 0, start)
        prep = None
        prep_start = start
        if prep_match is not None:
            prep = " ".join((prep_match["prep"] or prep_match["dash"]).lower().split())
            prep_start = prep_match.start()
        continues_range = prep in rules.connectors and bool(hits) and hits[-1].prep in rules.openers
        if (
            pattern.needs_prep
            and (prep is None or prep in rules.connectors)
            and not continues_range
        ):
            continue
        hits.append(_Hit(start, end, period, pattern.soft, prep, prep_start))
        last_end = end
    return hits


def _constraint(hit: _Hit, text: str) -> TimeConstraint:
    start, end = hit.period
    prep, rules = hit.prep, current().time
    if prep in rules.before_start:
        return TimeConstraint(None, start, text, "before", hit.soft)
    if prep in rules.before_end:
        return TimeConstraint(None, end, text, "before", hit.soft)
    if prep in rules.after_end:
        return TimeConstraint(end, None, text, "after", hit.soft)
    if prep in rules.after_start:
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
    rules = current().time
    constraints: list[TimeConstraint] = []
    index = 0
    while index < len(hits):
        hit = hits[index]
        following = hits[index + 1] if index + 1 < len(hits) else None
        if (
            following is not None
            and hit.prep in rules.openers
            and following.prep in rules.connectors
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
