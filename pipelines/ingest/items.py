"""The write path's unit of work: one memory to be stored, with everything computed for it.

Intake (:mod:`pipelines.ingest.intake`) creates an :class:`Item` per turn or memory;
encoding (:mod:`pipelines.ingest.encode`) fills its vectors and chunks, analysis
(:mod:`pipelines.ingest.analyse`) its entities and facts, the gate its decision; the writer
(:mod:`pipelines.ingest.writer`) stores it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from pipelines.errors import Conflict
from pipelines.ingest.entities import EntityMention
from pipelines.ingest.gate import GateDecision


@dataclass
class ChunkOut:
    """One chunk of a memory longer than the embedder's window: ``text[start:end]``."""

    index: int
    start: int
    end: int
    text: str
    embedding: np.ndarray | None = None
    tokens: bytes | None = None  # packed late-interaction token vectors


@dataclass
class Item:
    """One memory to be (possibly) written, with everything computed before the transaction."""

    index: int
    id: str
    text: str
    role: str
    speaker: str | None
    kind: str
    tags: list[str]
    event_time: datetime
    session_id: str | None
    turn_index: int | None
    stage_label: str | None
    metadata: dict[str, Any] | None
    content_hash: str
    existing: bool = False
    duplicate_of: str | None = None
    """The earlier item of the request with this id and the same memory (``memories.0``):
    this one is not written (``existing`` is set too) and reported ``unchanged``."""
    stage_id: str | None = None
    embedding: np.ndarray | None = None
    tokens: bytes | None = None  # packed late-interaction token vectors
    chunks: list[ChunkOut] = field(default_factory=list)
    """Empty for a memory that fits the embedder's window (it is its own single chunk)."""
    spans: list[tuple[int, int]] | None = None
    """The chunk spans, when they were planned before encoding (the request's work estimate);
    ``[]`` for a memory that fits the window."""
    mentions: list[EntityMention] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    """Fact rows (``ingest/create_facts``), computed before the transaction."""
    standing: list[dict[str, Any]] = field(default_factory=list)
    """Standing instructions and preferences (``ingest/create_standing``), with embeddings."""
    gate: GateDecision | None = None

    @property
    def stored(self) -> bool:
        """New and admitted by the gate: the writer creates it."""
        return not self.existing and self.gate is not None and self.gate.decision == "stored"


#: What makes two items of one request the same memory: (Item attribute, field in the API).
_SAME_MEMORY = (
    ("content_hash", "content"),
    ("role", "role"),
    ("speaker", "speaker"),
    ("kind", "kind"),
    ("tags", "tags"),
    ("event_time", "time"),
    ("session_id", "session_id"),
    ("stage_label", "stage"),
    ("metadata", "metadata"),
)


def fold_duplicates(items: Sequence[Item], fld: str) -> None:
    """An id given twice in one request (``fld``: the list's field): the same memory again
    (its content as a re-send compares it, every other field alike) is stored once, the later
    one ``unchanged``; another memory under that id is a conflict (409) naming the later one."""
    first: dict[str, Item] = {}
    for it in items:
        seen = first.setdefault(it.id, it)
        if seen is it:
            continue
        differ = [name for attr, name in _SAME_MEMORY if getattr(it, attr) != getattr(seen, attr)]
        if differ:
            raise Conflict(
                f"id {it.id!r} is also the id of {fld}.{seen.index}, with another "
                f"{', '.join(differ)}: one id names one memory (give each its own id)",
                field=f"{fld}.{it.index}.id",
            )
        it.existing = True
        it.duplicate_of = f"{fld}.{seen.index}"
