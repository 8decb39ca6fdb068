"""Session documents: a conversation session's memory texts, kept for session-level search.

Each ``(:Session)`` node holds the texts of its memories as the ``LIST<STRING>`` property
``texts`` (the ``max_memories`` latest by event time), indexed by the full-text index
``session_text`` together with the space's full-text tag. Recall ranks whole sessions by BM25
over these documents (:mod:`pipelines.recall.service`, ``session_documents`` in a preset):
a session that covers the query's words across several turns is likely the conversation the
question is about, even when no single turn matches every word.

Every write that adds or deletes a session's memories rebuilds its document in the same
transaction (ingest, ``DELETE /memories/{id}``, the retention job's deletions), so a deleted
memory's text never outlives it. Status changes (supersession, merges, archiving) keep the
text in the document: it only ranks sessions and is never returned.
"""

from __future__ import annotations

from collections.abc import Iterable

from pipelines import spaces
from pipelines.graph import Tx

DEFAULT_MAX_MEMORIES = 1_000
"""A document holds the texts of at most this many memories of its session, the latest by
event time: rebuilding it reads them all, so a very long session costs a bounded write."""


def refresh(
    tx: Tx,
    space: str,
    session_ids: Iterable[str | None] | None,
    max_memories: int = DEFAULT_MAX_MEMORIES,
) -> int:
    """Rebuild the documents of ``session_ids`` (``None``: every session of ``space``)
    inside ``tx``; returns how many sessions were rebuilt. ``None`` ids are ignored."""
    ids = None if session_ids is None else sorted({s for s in session_ids if s is not None})
    if ids is not None and not ids:
        return 0
    rows = tx.run(
        "ingest/session_documents",
        space=space,
        space_tag=spaces.fulltext_tag(space),
        session_ids=ids,
        max_memories=max_memories,
    )
    return int(rows[0]["sessions"]) if rows else 0
