"""Access statistics written behind the read path: recall records its accesses here and a
background worker writes them in batches, so a read never writes, waits or fails for them.

Accesses wait in a bounded in-process map keyed by (space, memory id): a memory accessed again
before the flush keeps one entry (its latest heat, the time of the latest access, the number of
accesses). When the map is full, a new memory's access is dropped and counted (the request is
never blocked). The worker flushes at most once per ``interval_s``: one write transaction per
space and batch of ``batch`` rows. A flush that fails is logged and counted; its accesses are
lost (they are statistics, never data), and no read sees the failure.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pipelines.graph import GraphStore

__all__ = ["Access", "AccessLog"]

log = logging.getLogger("mnemograph.access")

_Key = tuple[str, str]  # (space, memory id)


@dataclass(frozen=True, slots=True)
class Access:
    """A memory's accesses not yet written: its heat after the latest, when it happened, and
    how many there were."""

    heat: float
    at: datetime
    count: int = 1


class AccessLog:
    """The bounded queue of accesses and the worker that writes them (started on first use)."""

    def __init__(
        self,
        store: GraphStore,
        capacity: int = 10_000,
        batch: int = 500,
        interval_s: float = 1.0,
        statement: str = "recall/touch",
        autostart: bool = True,
    ) -> None:
        """``autostart`` false: no worker, only explicit :meth:`flush` calls write (tests)."""
        self._store = store
        self.capacity = capacity
        self.batch = batch
        self.interval_s = interval_s
        self._statement = statement
        self._pending: dict[_Key, Access] = {}
        self._inflight: dict[_Key, Access] = {}
        self._lock = threading.Lock()
        self._flushing = threading.Lock()  # one flush at a time (worker or an explicit call)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._autostart = autostart
        self.dropped = 0  # accesses refused because the queue was full
        self.written = 0  # accesses written
        self.failed_flushes = 0  # batches whose write failed
        self.lost = 0  # accesses of those batches

    def pending(self, space: str, ids: Sequence[str]) -> dict[str, Access]:
        """The accesses of ``ids`` not written yet (the latest heat to raise from)."""
        with self._lock:
            out = {}
            for item_id in ids:
                key = (space, item_id)
                got = self._pending.get(key) or self._inflight.get(key)
                if got is not None:
                    out[item_id] = got
            return out

    def record(self, space: str, heats: Sequence[tuple[str, float]], at: datetime) -> int:
        """Queue one access of each ``(memory id, new heat)``; returns how many were dropped
        (the queue was full). Never blocks on the database."""
        dropped = 0
        with self._lock:
            for item_id, heat in heats:
                key = (space, item_id)
                before = self._pending.get(key)
                if before is None and len(self._pending) >= self.capacity:
                    dropped += 1
                    continue
                self._pending[key] = Access(heat, at, (before.count if before else 0) + 1)
            self.dropped += dropped
        self._start()
        return dropped

    def size(self) -> int:
        with self._lock:
            return len(self._pending)

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {
                "queued": len(self._pending),
                "capacity": self.capacity,
                "dropped": self.dropped,
                "written": self.written,
                "failed_flushes": self.failed_flushes,
                "lost": self.lost,
            }

    def flush(self) -> int:
        """Write every queued access now (one transaction per space and batch); returns how
        many were written. Failures are logged and counted, never raised."""
        with self._flushing:
            with self._lock:
                taken, self._pending = self._pending, {}
                self._inflight = dict(taken)
            by_space: dict[str, list[dict[str, Any]]] = {}
            for (space, item_id), a in taken.items():
                row = {"id": item_id, "heat": a.heat, "at": a.at, "count": a.count}
                by_space.setdefault(space, []).append(row)
            written = 0
            for space, rows in by_space.items():
                for start in range(0, len(rows), self.batch):
                    written += self._write(space, rows[start : start + self.batch])
            with self._lock:
                self._inflight = {}
                self.written += written
            return written

    def _write(self, space: str, rows: list[dict[str, Any]]) -> int:
        try:
            self._store.write(self._statement, space=space, rows=rows, now=datetime.now(UTC))
        except Exception as exc:  # statistics: never surfaced to a read
            with self._lock:
                self.failed_flushes += 1
                self.lost += len(rows)
            log.warning("could not write %d accesses of space %s: %s", len(rows), space, exc)
            return 0
        return len(rows)

    def _start(self) -> None:
        with self._lock:
            if self._thread is not None or self._stop.is_set() or not self._autostart:
                return
            self._thread = threading.Thread(
                target=self._work, name="mnemograph-access-log", daemon=True
            )
            self._thread.start()

    def _work(self) -> None:
        while not self._stop.wait(self.interval_s):
            if self.size():
                self.flush()

    def close(self, final_flush: bool = True) -> None:
        """Stop the worker; write what is queued first unless ``final_flush`` is false."""
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=max(1.0, 2 * self.interval_s))
        if final_flush and self.size():
            self.flush()
