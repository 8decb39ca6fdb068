"""Candidates as the phases hand them on: rendered records with their token costs.

A memory becomes an :class:`Item` holding its record line (``who: what``), its group line
(``[when | stage]``, shared by the section's records with the same one) and the tokens of each,
so planning can charge every group line once.  A stage summary is an :class:`Item` with a
whole delimited block and no group.

What a long memory shows in a context (pure): never its whole text, but the chunks recall
chose for the query (its best matching ones, else its first), in text order, with a marker of
what was left out, so the reader knows the record is an excerpt and of how much.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from typing import Any, TypedDict

from pipelines.graph import as_utc, from_epoch_micros, to_native
from pipelines.prompt.blocks import (
    MemoryRecord,
    group_records,
    record_group,
    record_head,
    render_memory_line,
    render_record_lines,
)
from pipelines.prompt.tokens import TokenEstimator
from pipelines.recall.request import ChunkSpan
from pipelines.recall.service import RecallHit

__all__ = [
    "GAP",
    "Evidence",
    "Item",
    "Stage",
    "StageSpan",
    "costs",
    "dates_needing_minutes",
    "display_order",
    "excerpt",
    "grouped",
    "grouped_costs",
    "memory_item",
    "one_line",
    "read_stages",
    "record_item",
    "record_time",
    "records_text",
    "retime",
    "short_time",
    "span_text",
    "stage_display",
    "stage_row",
    "surviving",
    "timestamp",
    "with_content",
]


class Evidence(TypedDict, total=False):
    """What the step that ranked an item knew about it (the report's per-item fields with
    ``explain``)."""

    rank: int
    mmr_gain: float
    ppr_mass: float
    via: list[str]
    ranks: dict[str, int]
    fused: float


@dataclass
class Item:
    """One candidate record of a phase, rendered."""

    id: str
    block: str
    tokens: int
    stage_id: str | None = None
    score: float | None = None
    detail: Evidence = field(default_factory=lambda: Evidence())
    head: str | None = None
    """A memory record's full head (``[when | stage] who: ``); ``None`` for summary blocks."""
    group: str | None = None
    """A memory record's group line (``[when | stage]``); ``None`` for summary blocks."""
    group_tokens: int = 0
    """Tokens of :attr:`group` and its line break, paid once per group in a section."""
    record: MemoryRecord | None = None
    moment: datetime | None = None
    """A memory's time (UTC), from which :func:`retime` sets the record's precision."""

    @property
    def opening(self) -> str:
        return self.head if self.head is not None else self.block.split("\n", 1)[0]


@dataclass
class Stage:
    id: str
    name: str | None
    kind: str | None
    started_at: datetime | None
    ended_at: datetime | None
    ordinal: int | None

    @property
    def label(self) -> str:
        return one_line(self.name or self.id)

    def span(self) -> StageSpan:
        return StageSpan(self.id, self.started_at, self.ended_at, self.ordinal)


def stage_row(row: dict[str, Any]) -> Stage:
    return Stage(
        id=row["id"],
        name=row.get("name"),
        kind=row.get("kind"),
        # Times as epoch microseconds: the stage list is read on every call, and hydrating
        # hundreds of DateTimes cost more than the query (assemble/stages).
        started_at=from_epoch_micros(row.get("started_at_us")),
        ended_at=from_epoch_micros(row.get("ended_at_us")),
        ordinal=row.get("ordinal"),
    )


def read_stages(rows: Sequence[dict[str, Any]]) -> dict[str, Stage]:
    """The space's stages (``assemble/stages`` rows) by id."""
    return {s.id: s for s in (stage_row(r) for r in rows)}


def one_line(text: str, limit: int = 80) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def timestamp(moment: datetime | None) -> float:
    return moment.timestamp() if moment is not None else float("-inf")


def stage_display(stage_id: str | None) -> str | None:
    """A stage's display name from its id (``label:trip`` -> ``trip``), as ingest names it."""
    if stage_id is None:
        return None
    return one_line(stage_id.split(":", 1)[1] if ":" in stage_id else stage_id)


def span_text(stage: Stage) -> str | None:
    """A summary block's time: the stage's start, or its start and end."""
    start, end = short_time(stage.started_at), short_time(stage.ended_at)
    if start is None:
        return None
    if end is None or end == start:
        return start
    return f"{start} – {end}"


def memory_item(
    hit: RecallHit,
    detail: Evidence,
    est: TokenEstimator,
    *,
    with_stage: bool,
    stage_name: str | None = None,
    chunks_shown: int = 1,
) -> Item:
    """A recalled memory as a record (its stage named in the group line when
    ``with_stage``: by ``stage_name``, else from its stage id). A long memory shows its
    first ``chunks_shown`` chunks of the hit's (:func:`~pipelines.assemble.excerpt.excerpt`)."""
    moment = as_utc(to_native(hit.time))
    record = MemoryRecord(
        id=hit.id,
        content=excerpt(hit.id, hit.content, hit.chunks, chunks_shown),
        speaker=hit.speaker or hit.role,
        time=short_time(moment),
        stage=(stage_name or stage_display(hit.stage_id)) if with_stage else None,
    )
    item = Item(
        id=hit.id,
        block="",
        tokens=0,
        stage_id=hit.stage_id,
        score=round(float(hit.score), 6),
        detail=detail,
        moment=moment,
    )
    _render(item, record, est)
    return item


def record_item(
    id: str,
    content: str,
    speaker: str | None,
    moment: datetime | None,
    score: float | None,
    est: TokenEstimator,
) -> Item:
    """A record that is not a recalled memory (a fact): ``[when] who: content``."""
    when = as_utc(moment)
    record = MemoryRecord(id=id, content=content, speaker=speaker, time=short_time(when))
    item = Item(id=id, block="", tokens=0, score=score, moment=when)
    _render(item, record, est)
    return item


def with_content(item: Item, content: str, est: TokenEstimator) -> Item:
    """A copy of the memory record ``item`` showing ``content`` instead (a compact record),
    with the same provenance."""
    if item.record is None:
        raise AssertionError(f"item {item.id!r} is not a memory record")
    copy = replace(item, detail=Evidence(**item.detail))
    _render(copy, replace(item.record, content=content), est)
    return copy


def _render(item: Item, record: MemoryRecord, est: TokenEstimator) -> None:
    item.record = record
    item.block = render_memory_line(record)
    item.head = record_head(record)
    item.group = record_group(record)
    item.tokens = est.count(item.block) + 1  # + the line break between records
    item.group_tokens = est.count(item.group) + 1


def retime(precision: str, est: TokenEstimator, *phases: Sequence[Item]) -> None:
    """Every memory record's time at ``precision`` (``auto``: the time of day only on dates
    where the candidates of all phases differ in it), re-rendered before the phases are
    planned, so the token counts the plan uses are final."""
    if precision == "minute":
        return
    items = [i for phase in phases for i in phase if i.record is not None]
    minute_dates = (
        dates_needing_minutes(i.moment for i in items) if precision == "auto" else frozenset()
    )
    for item in items:
        assert item.record is not None
        when = record_time(item.moment, precision, minute_dates)
        if when != item.record.time:
            _render(item, replace(item.record, time=when), est)


def costs(items: Sequence[Item]) -> list[int]:
    """What each item of a ranked phase list adds to its section (its record line, and its
    group line if it is the group's first record)."""
    return grouped_costs([(i.group, i.tokens, i.group_tokens) for i in items])


def display_order(items: Sequence[Item], time_order: bool) -> list[Item]:
    """Memory records as a section shows them: for event-order questions (``time_order``) in
    time order (chosen by relevance, read in sequence), else in the given (rank) order."""
    if not time_order:
        return list(items)
    return sorted(items, key=lambda i: timestamp(i.moment))


def grouped(items: Sequence[Item]) -> list[Item]:
    """A section's items in display order: each ``[when | stage]`` group together, groups in
    the order of their best-ranked item, rank order inside a group (summaries keep theirs)."""
    if not any(i.group is not None for i in items):
        return list(items)
    return group_records(items, lambda i: i.group or "")


def records_text(items: Sequence[Item]) -> str:
    """The ``<memories>`` block of memory items, grouped (:func:`grouped`), from their
    rendered lines."""
    pairs = []
    for item in grouped(items):
        if item.group is None:
            raise AssertionError(f"item {item.id!r} is not a memory record")
        pairs.append((item.group, item.block))
    return render_record_lines(pairs)


def surviving(items: Sequence[Item], openings: Sequence[str]) -> list[Item]:
    """The items whose blocks (or records) are still in a section after condensing.

    Condensing keeps them in order and only ever drops trailing ones, so the k-th one left is
    the k-th item (openings need not be unique: two memories of one speaker at one time share
    theirs).  Each pairing is checked against the opening line (a record's head) anyway.
    """
    present = []
    for item, opening in zip(items, openings, strict=False):
        if item.opening != opening:
            raise AssertionError(f"{opening!r} does not belong to item {item.id!r}")
        present.append(item)
    return present


#: Between two shown chunks that are not adjacent in the memory's text.
GAP = "[…]"


def excerpt(memory_id: str, text: str, spans: Sequence[ChunkSpan], shown: int) -> str:
    """The first ``shown`` of ``spans`` (best first) cut from ``text``, in text order, joined
    by :data:`GAP` where they are not adjacent, then the marker line
    ``[… chunk 12 of 3,701 of memory doc; 2,012,345 characters left out …]``.
    ``text`` as it is when there are no spans (a memory within the embedder's window)."""
    chosen = sorted(spans[: max(1, shown)], key=lambda s: s.start)
    if not chosen:
        return text
    pieces: list[str] = []
    kept = 0
    previous: ChunkSpan | None = None
    for span in chosen:
        piece = text[span.start : span.end].strip()
        if previous is not None and span.index != previous.index + 1:
            pieces.append(GAP)
        pieces.append(piece)
        kept += span.end - span.start
        previous = span
    numbers = ", ".join(f"{s.index + 1:,}" for s in chosen)
    noun = "chunk" if len(chosen) == 1 else "chunks"
    left_out = max(0, len(text) - kept)
    of = max(s.of for s in chosen)
    marker = (
        f"[… {noun} {numbers} of {of:,} of memory {memory_id}; {left_out:,} characters left out …]"
    )
    return "\n".join([*pieces, marker])


def grouped_costs(items: Sequence[tuple[Hashable | None, int, int]]) -> list[int]:
    """Each item's marginal tokens in a ranked list of ``(group, tokens, group_tokens)``: its
    own tokens, plus its group's line when it is the first item of that group (``None``: no
    group line).  Exact for every prefix of the list, which is all :func:`plan_phase_counts`
    ever takes, since a section renders one line per group of the items it holds."""
    seen: set[Hashable] = set()
    costs = []
    for group, tokens, group_tokens in items:
        first = group is not None and group not in seen
        seen.add(group)
        costs.append(tokens + (group_tokens if first else 0))
    return costs


@dataclass(frozen=True, slots=True)
class StageSpan:
    """A stage's place in time."""

    id: str
    started_at: datetime | None
    ended_at: datetime | None
    ordinal: int | None = None


def short_time(moment: datetime | None) -> str | None:
    """``YYYY-MM-DD HH:MM`` in UTC (seconds dropped: provenance, not a timestamp key)."""
    if moment is None:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M")


def _utc_minute(moment: datetime) -> datetime:
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.replace(second=0, microsecond=0, tzinfo=None)


def dates_needing_minutes(moments: Iterable[datetime | None]) -> frozenset[date]:
    """The (UTC) dates on which ``moments`` differ in their time of day (to the minute).

    Only there does a record's ``HH:MM`` tell the reader something its date does not: the
    order of that day's records.  Where every record of a day shares one time (a conversation
    session stamped once, a day with a single record) the date alone says as much and saves
    about two tokens per record.
    """
    minutes: dict[date, set[datetime]] = {}
    for moment in moments:
        if moment is not None:
            minute = _utc_minute(moment)
            minutes.setdefault(minute.date(), set()).add(minute)
    return frozenset(day for day, seen in minutes.items() if len(seen) > 1)


def record_time(
    moment: datetime | None, precision: str, minute_dates: frozenset[date] = frozenset()
) -> str | None:
    """A record's time: ``YYYY-MM-DD HH:MM`` (``precision`` "minute"), ``YYYY-MM-DD``
    ("date"), or for "auto" the minute only on ``minute_dates``
    (:func:`dates_needing_minutes`)."""
    if moment is None:
        return None
    if precision not in ("auto", "minute", "date"):
        raise ValueError(f"unknown time precision {precision!r}")
    full = short_time(moment)
    if precision == "minute":
        return full
    if precision == "auto" and _utc_minute(moment).date() in minute_dates:
        return full
    return full[:10] if full else None
