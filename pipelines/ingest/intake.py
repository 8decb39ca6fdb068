"""A request's turns and memories as :class:`~pipelines.ingest.items.Item` s, validated.

Ids are the client's or derived: ``<session_id>#<turn position>`` for a turn, a content hash for
a free memory, so a re-sent request finds the same ids (:mod:`pipelines.ingest.service`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from pipelines.graph import as_utc
from pipelines.ingest.config import IngestConfig
from pipelines.ingest.inputs import MemoryIn, SessionIn
from pipelines.ingest.items import Item
from pipelines.ingest.limits import check_limit, check_text, check_unique_ids
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
        items.append(
            Item(
                index=i,
                id=turn.id or f"{session.session_id}#{i}",
                text=text,
                role=turn.role,
                speaker=turn.speaker,
                kind="turn",
                tags=[],
                event_time=times[i] or base,
                session_id=session.session_id,
                turn_index=i,
                stage_label=session.stage,
                metadata=turn.metadata,
                content_hash=content_hash(text),
            )
        )
    check_unique_ids(items, prefix)
    return items


def memory_items(config: IngestConfig, memories: Sequence[MemoryIn]) -> list[Item]:
    """One item per free memory; a memory without a time is timed now."""
    now = datetime.now(UTC)
    items = []
    for i, mem in enumerate(memories):
        text = check_text(config, mem.content, f"memories.{i}.content")
        items.append(
            Item(
                index=i,
                id=mem.id or f"mem-{content_hash(text)[:16]}",
                text=text,
                role=mem.role,
                speaker=mem.speaker,
                kind=mem.kind,
                tags=list(mem.tags),
                event_time=as_utc(mem.time) or now,
                session_id=mem.session_id,
                turn_index=None,
                stage_label=mem.stage,
                metadata=mem.metadata,
                content_hash=content_hash(text),
            )
        )
    check_unique_ids(items, "memories")
    return items
