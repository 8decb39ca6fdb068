"""What a consolidation job gets: the engine, its space, the effective config, and where to
report (counts, a sample of changes, errors). Built by :mod:`pipelines.consolidate.runner`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pipelines.consolidate.config import ConsolidationConfig, RetentionPolicy
from pipelines.consolidate.lease import JobAborted, Lease
from pipelines.engine import Engine
from pipelines.graph import GraphStore

FailureHook = Callable[[str], None]


@dataclass
class JobContext:
    """One run of one job in one space."""

    engine: Engine
    space: str
    job: str
    dry_run: bool
    now: datetime
    config: ConsolidationConfig
    retention: RetentionPolicy
    lease: Lease | None = None
    failure_hook: FailureHook | None = None
    sample_size: int = 20
    counts: Counter[str] = field(default_factory=Counter)
    sample: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def store(self) -> GraphStore:
        return self.engine.store

    def note(self, change: dict[str, Any]) -> None:
        """Record one planned or applied change for the run's report (first N kept)."""
        if len(self.sample) < self.sample_size:
            self.sample.append(change)

    def checkpoint(self, label: str) -> None:
        """Between batches: call the failure hook (tests), then stop if the lease was lost."""
        if self.failure_hook is not None:
            self.failure_hook(label)
        if self.lease is not None and self.lease.lost.is_set():
            raise JobAborted(f"lease of {self.job!r} in space {self.space!r} was lost")
