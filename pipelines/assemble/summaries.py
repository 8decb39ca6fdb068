"""Phase 3: schema summaries of the stages phases 1-2 did not cover, nearest in time first.

Summaries are read as stored, never built here: a missing or stale one is queued for the
background refresher through :mod:`pipelines.maintenance` (the ``schemas`` job builds them too);
a stale one is used as it is, and the report counts both (``stale_summaries``,
``unbuilt_summaries``).  The schemas of the nearest stages are read ahead while phases 1-2 run
(:func:`summaries_ahead`); Phase 3 (:func:`stage_summaries`) then reads only what that guess
missed.  With ``as_of`` only stages that had ended by then are summarised.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pipelines import maintenance
from pipelines.assemble.items import Item, Stage, StageSpan, span_text, timestamp
from pipelines.assemble.render import pack_to_budget
from pipelines.assemble.report import SummariesFacts
from pipelines.assemble.request import Run
from pipelines.prompt.blocks import StageSummaryRecord, render_summary_block

__all__ = [
    "Ahead",
    "order_stages_by_distance",
    "render_schema",
    "stage_summaries",
    "summaries_ahead",
    "whole_history_summaries",
]


Schemas = dict[str, dict[str, Any]]


@dataclass(frozen=True)
class Ahead:
    """Schemas being read ahead: the stage ids asked for, and the answer to come."""

    stage_ids: list[str]
    schemas: Future[tuple[Schemas, list[str]]]


def _summary_order(
    run: Run, current: Stage | None, covered: set[str], stages: dict[str, Stage]
) -> list[str]:
    """Stages Phase 3 may summarise (not covered; ended by ``as_of``), nearest first."""
    candidates = [
        s
        for s in stages.values()
        if s.id not in covered
        and (run.as_of is None or (s.ended_at is not None and s.ended_at <= run.as_of))
    ]
    return order_stages_by_distance(
        current.span() if current else None, [s.span() for s in candidates]
    )


def _wanted(run: Run, share: int) -> int:
    """Summaries Phase 3 asks for: what its share holds at the expected summary size, one
    more, at most ``max_summaries``."""
    cfg = run.config
    return min(cfg.max_summaries, max(1, math.ceil(share / cfg.expected_summary_tokens)) + 1)


def summaries_ahead(
    run: Run, current: Stage | None, stages: dict[str, Stage], share: int, related_minimum: int
) -> Ahead | None:
    """Start reading (queueing a build when missing or stale) the schemas Phase 3 will most
    likely want: the
    nearest stages, as many as it wants plus as many as Phase 2 may yet cover."""
    covered = {current.id} if current else set()
    order = _summary_order(run, current, covered, stages)
    ids = order[: _wanted(run, share) + max(related_minimum, 1)]
    if not ids:
        return None
    future = run.read_ahead.submit(maintenance.stored_stage_schemas, run.engine, run.space, ids)
    return Ahead(ids, future)


def stage_summaries(
    run: Run,
    current: Stage | None,
    covered: set[str],
    stages: dict[str, Stage],
    share: int,
    ahead: Ahead | None,
) -> tuple[list[Item], SummariesFacts]:
    """Summaries of the stages not ``covered``, nearest in time first, as blocks."""
    order = _summary_order(run, current, covered, stages)
    wanted = _wanted(run, share)
    facts = SummariesFacts(run=True, uncovered_stages=len(order), covered_stages=sorted(covered))
    if not order or wanted <= 0:
        return [], facts
    ahead_schemas: Schemas = {}
    known: set[str] = set()  # asked for ahead: absent from the answer = gone or not built
    unbuilt: set[str] = set()  # queued for a build (missing or stale)
    if ahead is not None:
        got, queued = ahead.schemas.result()
        ahead_schemas = {sid: got[sid] for sid in ahead.stage_ids if sid in got}
        known = set(ahead.stage_ids)
        unbuilt.update(queued)
    items: list[Item] = []
    empty = 0
    stale = 0
    not_built = 0
    pos = 0
    while len(items) < wanted and pos < len(order):
        # As many stages as summaries still wanted, in one batch (empty ones: another).
        batch = order[pos : pos + wanted - len(items)]
        pos += len(batch)
        missing = [sid for sid in batch if sid not in known]
        schemas = {sid: ahead_schemas[sid] for sid in batch if sid in ahead_schemas}
        if missing:
            got, queued = maintenance.stored_stage_schemas(run.engine, run.space, missing)
            schemas.update(got)
            unbuilt.update(queued)
        for sid in batch:
            schema = schemas.get(sid)  # None: not built yet, or the stage went away
            not_built += schema is None and sid in unbuilt
            text = render_schema(schema) if schema else ""
            if not text:
                empty += 1
                continue
            stale += bool(schema and schema.get("stale"))
            stage = stages[sid]
            block = render_summary_block(
                StageSummaryRecord(stage=stage.label, content=text, time=span_text(stage))
            )
            items.append(Item(id=sid, block=block, tokens=run.est.count(block) + 1, stage_id=sid))
    facts.summaries_read = len(items) + empty
    if empty:
        facts.empty_summaries = empty
    if stale:
        facts.stale_summaries = stale
    if not_built:
        facts.unbuilt_summaries = not_built
    return items, facts


def whole_history_summaries(
    run: Run, stages: dict[str, Stage], share: int, floor: int = 0
) -> tuple[list[Item], int, SummariesFacts]:
    """Flat mode's summaries for a question over the whole history: those of the most recent
    stages that ``share`` holds, first fit, in time order (when none fits, the most recent
    that ``floor`` holds); and how many read did not fit."""
    if max(share, floor) <= 0 or not stages:
        return [], 0, SummariesFacts(run=False, reason="no stages" if stages else "no room")
    items, facts = stage_summaries(run, None, set(), stages, share, None)
    fit = pack_to_budget([(i, i.tokens) for i in items], share).kept
    if not fit and floor > share:
        fit = pack_to_budget([(i, i.tokens) for i in items], floor).kept[:1]
    kept = sorted(fit, key=lambda i: timestamp(stages[i.id].started_at))
    return kept, len(items) - len(kept), facts


def _seconds_apart(a: StageSpan, b: StageSpan) -> float:
    """Gap between two time intervals (0 when they overlap); ``inf`` if a time is missing."""
    if a.started_at is None or b.started_at is None:
        return math.inf
    a_end = a.ended_at or a.started_at
    b_end = b.ended_at or b.started_at
    if a_end < b.started_at:
        return (b.started_at - a_end).total_seconds()
    if b_end < a.started_at:
        return (a.started_at - b_end).total_seconds()
    return 0.0


def order_stages_by_distance(current: StageSpan | None, stages: Sequence[StageSpan]) -> list[str]:
    """Stage ids ordered by distance in time from ``current`` (nearest first).

    Ties (and stages without times) are broken by ordinal distance, then earlier stage first,
    then id.  Without a current stage, the most recent stages come first.
    """
    if current is None:
        ranked = sorted(
            stages,
            key=lambda s: (
                s.ended_at is None and s.started_at is None,
                -(s.ended_at or s.started_at or datetime.min.replace(tzinfo=UTC)).timestamp(),
                s.id,
            ),
        )
        return [s.id for s in ranked]

    def key(s: StageSpan) -> tuple[float, float, float, str]:
        ordinal_gap = (
            abs(s.ordinal - current.ordinal)
            if s.ordinal is not None and current.ordinal is not None
            else math.inf
        )
        return (_seconds_apart(current, s), ordinal_gap, s.ordinal or 0, s.id)

    return [s.id for s in sorted((s for s in stages if s.id != current.id), key=key)]


_SCHEMA_LISTS = (
    ("entities", "Entities"),
    ("decisions", "Decisions"),
    ("outcomes", "Outcomes"),
    ("open_questions", "Open questions"),
)


def _items(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, Iterable):
        out = []
        for item in value:
            if isinstance(item, Mapping):
                text = item.get("text") or item.get("name") or item.get("key")
            else:
                text = item
            if text is not None and str(text).strip():
                out.append(" ".join(str(text).split()))
        return out
    return [str(value)]


def render_schema(schema: Mapping[str, Any]) -> str:
    """A stage schema as compact text.

    The consolidation job's ``summary`` already carries every slot (key entities, decisions,
    outcomes, open questions, highlights) as one bounded text, so when present it is the
    rendering.  Otherwise the slots are listed: the entities on one line, then decisions,
    outcomes and open questions as bullet lists (empty parts omitted).
    """
    summary = schema.get("summary")
    if isinstance(summary, str) and summary.strip():
        return summary.strip()
    lines: list[str] = []
    for field, title in _SCHEMA_LISTS:
        values = _items(schema.get(field))
        if not values:
            continue
        if field == "entities":
            lines.append(f"{title}: {', '.join(values)}")
        else:
            lines.append(f"{title}:")
            lines.extend(f"- {v}" for v in values)
    return "\n".join(lines)
