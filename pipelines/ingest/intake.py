"""A request's turns and memories as :class:`~pipelines.ingest.items.Item` s, validated.

Ids are the client's or derived: ``<session_id>#<turn position>`` for a turn, a content hash for
a free memory, so a re-sent request finds the same ids (:mod:`pipelines.ingest.service`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from pipelines.graph import as_utc
from pipelines.ingest.config import IngestConfig
from pipelines.ingest.inputs import MemoryIn, SessionIn, TurnIn
from pipelines.ingest.items import Item, fold_duplicates
from pipelines.ingest.limits import check_limit, check_text
from pipelines.ingest.text import content_hash


def session_items(config: IngestConfig, session: SessionIn, prefix: str) -> list[Item]:
    """One item per turn; a turn without a time takes the session's start (else the first
    timed turn's, else now). ``prefix`` is the turns' field path in the request."""
    check_limit(config, len(session.turns), prefix)
    start = as_utc(session.started_at)
    times = [as_utc(t.time) for t in session.turns]
    base = start or next((t for t in times if t), None) or datetime.now(UTC)
    items = []
    for i, turn in enumerate(session.turns):
        text = check_text(config, turn.content, f"{prefix}.{i}.content")
        item_id = turn.id or f"{session.session_id}#{i}"
        items.append(_item(i, text, item_id, turn, times[i] or base, session))
    fold_duplicates(items, prefix)
    return items


def memory_items(config: IngestConfig, memories: Sequence[MemoryIn]) -> list[Item]:
    """One item per free memory; a memory without a time is timed now."""
    now = datetime.now(UTC)
    items = []
    for i, mem in enumerate(memories):
        text = check_text(config, mem.content, f"memories.{i}.content")
        item_id = mem.id or f"mem-{content_hash(text)[:16]}"
        items.append(_item(i, text, item_id, mem, as_utc(mem.time) or now))
    fold_duplicates(items, "memories")
    return items


def _item(
    index: int,
    text: str,
    item_id: str,
    source: TurnIn | MemoryIn,
    event_time: datetime,
    session: SessionIn | None = None,
) -> Item:
    """The item of ``source`` (its checked ``text``): turn ``index`` of ``session``, or free
    memory ``index`` of the request (a free memory has its own kind, tags, session and stage)."""
    if isinstance(source, MemoryIn):
        kind, tags, turn_index = source.kind, list(source.tags), None
        session_id, stage = source.session_id, source.stage
    else:
        kind, tags, turn_index = "turn", [], index
        session_id, stage = (session.session_id, session.stage) if session else (None, None)
    return Item(
        index=index,
        id=item_id,
        text=text,
        role=source.role,
        speaker=source.speaker,
        kind=kind,
        tags=tags,
        event_time=event_time,
        session_id=session_id,
        turn_index=turn_index,
        stage_label=stage,
        metadata=source.metadata,
        content_hash=content_hash(text),
    )
