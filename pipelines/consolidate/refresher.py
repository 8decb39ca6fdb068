"""The bounded background refresher of stage schemas: reads that find a schema missing or stale
ask for it here (never blocking) and one worker thread builds them, a few at a time.

Requests wait in a bounded set per space (a stage asked for twice waits once); when it is full,
new stages are dropped and counted (the ``schemas`` job still builds them). A build that fails
is logged and counted; no read sees it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from pipelines.consolidate import schemas
from pipelines.engine import Engine

__all__ = ["SchemaRefresher"]

log = logging.getLogger("mnemograph.consolidate.refresher")


class SchemaRefresher:
    def __init__(
        self, engine: Engine, capacity: int = 1_000, batch: int = 16, interval_s: float = 0.5
    ) -> None:
        self._engine = engine
        self.capacity = capacity
        self.batch = batch
        self.interval_s = interval_s
        self._pending: dict[str, dict[str, None]] = {}  # space -> stage ids, in request order
        self._lock = threading.Lock()
        self._building = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.dropped = 0
        self.built = 0  # stages whose schema a build returned
        self.failed = 0  # batches whose build failed

    def request(self, space: str, stage_ids: Sequence[str]) -> int:
        """Queue ``stage_ids`` of ``space`` for a build; returns how many were dropped."""
        dropped = 0
        with self._lock:
            queued = sum(len(v) for v in self._pending.values())
            wanted = self._pending.setdefault(space, {})
            for sid in stage_ids:
                if sid in wanted:
                    continue
                if queued >= self.capacity:
                    dropped += 1
                    continue
                wanted[sid] = None
                queued += 1
            if not wanted:
                del self._pending[space]
            self.dropped += dropped
        self._start()
        return dropped

    def queued(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._pending.values())

    def drain(self, limit: int | None = None) -> int:
        """Build queued schemas now, ``batch`` stages per write (all of them unless ``limit``
        batches); returns how many stages were built. Failures are logged and counted."""
        done = 0
        batches = 0
        with self._building:
            while limit is None or batches < limit:
                with self._lock:
                    if not self._pending:
                        break
                    space = next(iter(self._pending))
                    wanted = self._pending[space]
                    ids = list(wanted)[: self.batch]
                    for sid in ids:
                        del wanted[sid]
                    if not wanted:
                        del self._pending[space]
                batches += 1
                try:
                    done += len(schemas.ensure_schemas(self._engine, space, ids))
                except Exception as exc:  # best effort: the schemas job builds them too
                    with self._lock:
                        self.failed += 1
                    log.warning("could not build schemas of %s in %s: %s", ids, space, exc)
        with self._lock:
            self.built += done
        return done

    def _start(self) -> None:
        with self._lock:
            if self._thread is not None or self._stop.is_set():
                return
            self._thread = threading.Thread(
                target=self._work, name="mnemograph-schema-refresher", daemon=True
            )
            self._thread.start()

    def _work(self) -> None:
        while not self._stop.wait(self.interval_s):
            if self.queued():
                self.drain(limit=1)  # one batch per interval: a bounded rate

    def close(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=max(1.0, 2 * self.interval_s))
