"""In-process scheduler: runs every job in every space on its own interval.

One daemon thread wakes every ``tick_seconds``, lists the spaces and, for each job with an
interval (``SchedulerConfig.intervals_seconds``; ``None`` switches a job off), runs it in the
spaces where its last recorded run (any replica's: the clock is the ``JobRun`` history in
Neo4j) is older than the interval. Leases keep one runner per job and space, so every replica
may run a scheduler; a job another replica is running is simply skipped. ``retention`` runs as
a dry run unless the space's policy sets ``apply``. :meth:`Scheduler.stop` finishes the job in
progress and returns.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from pipelines import spaces
from pipelines.consolidate.config import (
    DEFAULT_CONSOLIDATION_CONFIG,
    JOB_NAMES,
    ConsolidationConfig,
    effective_config,
    parse_intervals,
)
from pipelines.consolidate.runner import Runner, run_job
from pipelines.engine import Engine
from pipelines.errors import Busy, DomainError
from pipelines.graph import to_native

log = logging.getLogger("mnemograph.scheduler")


def due_jobs(
    last_started: dict[str, datetime | None],
    intervals: dict[str, float | None],
    now: datetime,
) -> list[str]:
    """Jobs (in pipeline order) whose interval has passed since their last start. Pure."""
    due = []
    for job in JOB_NAMES:
        interval = intervals.get(job)
        if interval is None:
            continue
        last = last_started.get(job)
        if last is None or now - last >= timedelta(seconds=interval):
            due.append(job)
    return due


class Scheduler:
    def __init__(
        self,
        engine: Engine,
        config: ConsolidationConfig = DEFAULT_CONSOLIDATION_CONFIG,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        space_ids: Sequence[str] | None = None,
        intervals: str | None = None,
    ) -> None:
        """``space_ids`` limits the scheduler to those spaces (default: every space);
        ``intervals`` overrides job intervals (:func:`~pipelines.consolidate.config.
        parse_intervals` syntax, e.g. ``"decay=30m,retention=off"``)."""
        if intervals:
            config = config.model_copy(
                update={"scheduler": parse_intervals(intervals, config.scheduler)}
            )
        self.engine = engine
        self.space_ids = None if space_ids is None else frozenset(space_ids)
        self.config = config
        self.clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.runs = 0

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.running:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="mnemograph-scheduler", daemon=True)
        self._thread.start()
        log.info("consolidation scheduler started")

    def stop(self, timeout: float | None = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        log.info("consolidation scheduler stopped")

    def _loop(self) -> None:
        cfg = self.config.scheduler
        if self._stop.wait(cfg.initial_delay_seconds):
            return
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception:
                log.exception("scheduler tick failed")
            if self._stop.wait(cfg.tick_seconds):
                return

    def tick(self) -> list[tuple[str, str, str]]:
        """Run what is due in every space once; returns ``(space, job, status)`` per run."""
        cfg = self.config.scheduler
        intervals = dict(cfg.intervals_seconds)
        done: list[tuple[str, str, str]] = []
        for space in spaces.list_spaces(self.engine.store, self.space_ids, 0, cfg.max_spaces):
            if self._stop.is_set():
                break
            sid = space["id"]
            rows = self.engine.store.read("consolidate/jobrun_last", space=sid, include_dry=True)
            last = {r["job"]: to_native(r["last_started"]) for r in rows}
            for job in due_jobs(last, intervals, self.clock()):
                if self._stop.is_set():
                    break
                dry: bool | None = None
                if job == "retention":
                    _, policy = effective_config(self.config, space.get("settings"))
                    if policy.archive_after_days is None and (
                        policy.delete_archived_after_days is None
                    ):
                        continue
                    dry = not policy.apply
                try:
                    run = run_job(
                        self.engine,
                        sid,
                        job,
                        dry_run=dry,
                        config=self.config,
                        runner=Runner("scheduler"),
                    )
                    done.append((sid, job, run.status))
                    self.runs += 1
                except Busy:
                    done.append((sid, job, "busy"))
                except DomainError as exc:
                    log.warning("scheduled %s in %s: %s", job, sid, exc.message)
                    done.append((sid, job, "error"))
        return done
