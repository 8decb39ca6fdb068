"""One assembly's inputs and the services it reads through, handed to every step and helper."""

from __future__ import annotations

import time
from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import datetime

from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.memo import MemoEmbedder
from pipelines.assemble.request import ContextRequest
from pipelines.assemble.stage_inference import DensityCache
from pipelines.assemble.tokens import TokenEstimator
from pipelines.engine import Engine
from pipelines.graph import GraphStore
from pipelines.recall.service import Recaller
from pipelines.tracing import Laps

__all__ = ["Clock", "Run"]


class Clock:
    """Milliseconds per step (``report.timings_ms``), and with tracing on a span per step
    (``assemble.<step>``, current while the step runs): every step is timed, so every step
    is traced."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.timings: dict[str, float] = {}
        self.spans = Laps("assemble.")

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = round((now - self.last) * 1000.0, 2)
        self.last = now
        self.spans.lap(name)

    def total(self) -> dict[str, float]:
        self.timings["total"] = round((time.perf_counter() - self.start) * 1000.0, 2)
        self.spans.close("report")
        return self.timings


@dataclass(frozen=True)
class Run:
    """The request, the space's configuration, and the services of one assembly.

    ``recaller`` embeds through ``embedder`` (the assembler's memo), so a query embedded
    ahead of a recall is not embedded again; ``read_ahead`` runs the reads that need nothing
    from the step before them beside the recalls (tasks never submit tasks)."""

    space: str
    request: ContextRequest
    config: AssemblyConfig
    est: TokenEstimator
    as_of: datetime | None  # valid time
    now: datetime | None
    clock: Clock
    engine: Engine
    recaller: Recaller
    embedder: MemoEmbedder
    read_ahead: Executor
    density: DensityCache
    known_at: datetime | None = None  # recorded time

    @property
    def store(self) -> GraphStore:
        return self.engine.store

    @property
    def explain(self) -> bool:
        return self.request.explain

    @property
    def time_travel(self) -> bool:
        """Whether the context is assembled at another time: ``as_of`` (valid time) or
        ``known_at`` (recorded time)."""
        return self.as_of is not None or self.known_at is not None

    @property
    def with_superseded(self) -> bool:
        """Whether reads include superseded memories: asked for, or needed to see the space
        as it was at ``as_of`` / ``known_at`` (the validity check then keeps what was valid)."""
        return self.request.include_superseded or self.time_travel
