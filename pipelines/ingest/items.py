"""The write path's unit of work: one memory to be stored, with everything computed for it.

Intake (:mod:`pipelines.ingest.intake`) creates an :class:`Item` per turn or memory;
encoding (:mod:`pipelines.ingest.encode`) fills its vectors and chunks, analysis
(:mod:`pipelines.ingest.analyse`) its entities and facts, the gate its decision; the writer
(:mod:`pipelines.ingest.writer`) stores it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

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
