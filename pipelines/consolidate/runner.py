"""Running a consolidation job: lease, run record, dry run, failure handling.

:func:`run_job` is the only entry point the API, the CLI and the scheduler use:

1. the space must exist and the job must be known;
2. a **lease** ``(:Lease {space, job})`` is taken atomically in Neo4j (``MERGE`` plus a
   conditional ``SET`` after a locking write), so one runner per job and space exists even
   with several API replicas; a runner renews it between batches and a crashed runner's lease
   simply expires (its run record is then marked ``interrupted``);
3. a ``(:JobRun)`` node is written *before* any work (status ``running``) and completed with
   counts, errors, a sample of the changes and the duration;
4. the job runs with a :class:`JobContext`. Jobs write in transactions/batches that each leave
   the graph consistent, and plan from the current graph every time, so a run that dies half
   way is completed by the next one. ``JobContext.checkpoint`` is called between batches; it
   renews the lease and calls an optional failure hook (tests use it to simulate a crash).

A dry run plans exactly as a real run and reports what it *would* change, writing nothing but
its own run record.

:func:`run_full_pass` runs every job once and reports per-job timings (benchmarks use it).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pipelines import spaces
from pipelines.consolidate.config import (
    DEFAULT_CONSOLIDATION_CONFIG,
    JOB_NAMES,
    ConsolidationConfig,
    RetentionPolicy,
    effective_config,
)
from pipelines.engine import Engine
from pipelines.errors import Busy, NotFound
from pipelines.graph import GraphStore

log = logging.getLogger("mnemograph.consolidate")

FailureHook = Callable[[str], None]
JobFunction = Callable[["JobContext"], None]

#: Jobs whose default is a dry run (the caller must ask for changes explicitly).
DRY_BY_DEFAULT = frozenset({"retention"})


class JobAborted(RuntimeError):
    """The runner lost its lease (another runner took over after it expired)."""


def _holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass
class Lease:
    engine: Engine
    space: str
    job: str
    holder: str
    ttl_seconds: float
    renewed: float = field(default_factory=time.monotonic)

    def renew(self) -> None:
        rows = self.engine.store.write(
            "consolidate/lease_renew",
            space=self.space,
            job=self.job,
            holder=self.holder,
            ttl=self.ttl_seconds,
        )
        if not rows:
            raise JobAborted(f"lease of {self.job!r} in space {self.space!r} was lost")
        self.renewed = time.monotonic()

    def release(self) -> None:
        self.engine.store.write(
            "consolidate/lease_release", space=self.space, job=self.job, holder=self.holder
        )


def acquire_lease(
    engine: Engine, space: str, job: str, holder: str | None = None, ttl_seconds: float = 900.0
) -> Lease | None:
    """Take the (space, job) lease, or return ``None`` when another live runner holds it."""
    holder = holder or _holder()
    row = engine.store.write(
        "consolidate/lease_acquire", space=space, job=job, holder=holder, ttl=ttl_seconds
    )[0]
    if not row["acquired"]:
        return None
    if row.get("expired_holder"):
        engine.store.write(
            "consolidate/jobrun_interrupted", space=space, job=job, holder=row["expired_holder"]
        )
    return Lease(engine, space, job, holder, ttl_seconds)


@dataclass
class JobContext:
    """What a job gets: the engine, its space, the effective config, and where to report."""

    engine: Engine
    space: str
    job: str
    dry_run: bool
    now: datetime
    config: ConsolidationConfig
    retention: RetentionPolicy
    space_settings: dict[str, Any] = field(default_factory=dict)
    lease: Lease | None = None
    failure_hook: FailureHook | None = None
    renew_every_seconds: float = 60.0
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
        """Between batches: renew the lease when due, then call the failure hook (tests)."""
        if self.lease is not None and (
            time.monotonic() - self.lease.renewed >= self.renew_every_seconds
        ):
            self.lease.renew()
        if self.failure_hook is not None:
            self.failure_hook(label)


def job_function(name: str) -> JobFunction:
    """The ``run(ctx)`` function of a job (modules are imported on demand)."""
    from pipelines.consolidate import (
        communities,
        decay,
        merge,
        retention,
        schemas,
        supersede,
        token_vectors,
        upkeep,
    )

    table: dict[str, JobFunction] = {
        "decay": decay.run,
        "merge": merge.run,
        "supersede": supersede.run,
        "communities": communities.run,
        "schemas": schemas.run,
        "upkeep": upkeep.run,
        "token_vectors": token_vectors.run,
        "retention": retention.run,
    }
    if name not in table:
        raise NotFound(
            f"unknown job {name!r}; jobs are: {', '.join(JOB_NAMES)}",
            field="job",
        )
    return table[name]


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    to_native = getattr(value, "to_native", None)
    if to_native is not None:
        return to_native().isoformat()
    return str(value)


def run_job(
    engine: Engine,
    space: str,
    job: str,
    *,
    dry_run: bool | None = None,
    trigger: str = "api",
    now: datetime | None = None,
    config: ConsolidationConfig = DEFAULT_CONSOLIDATION_CONFIG,
    failure_hook: FailureHook | None = None,
    holder: str | None = None,
    raise_errors: bool = False,
) -> dict[str, Any]:
    """Run one job once in one space and return its run record.

    ``dry_run=None`` takes the job's default (a dry run for ``retention``, real otherwise).
    Raises :class:`~pipelines.errors.NotFound` for an unknown space or job and
    :class:`~pipelines.errors.Busy` when another runner holds the lease. A job that fails is
    recorded with status ``failed`` and its error; with ``raise_errors`` the error propagates
    after the record is written.
    """
    fn = job_function(job)
    space_data = spaces.get(engine.store, space)
    cfg, policy = effective_config(config, space_data.get("settings"))
    if dry_run is None:
        dry_run = job in DRY_BY_DEFAULT
    lease = acquire_lease(engine, space, job, holder, cfg.runner.lease_ttl_seconds)
    if lease is None:
        current = engine.store.read("consolidate/lease_get", space=space, job=job)
        until = current[0]["expires_at"] if current else None
        raise Busy(
            f"job {job!r} is already running in space {space!r} (lease held until {until})",
            field="job",
        )
    started = datetime.now(UTC)
    run_id = uuid.uuid4().hex
    ctx = JobContext(
        engine=engine,
        space=space,
        job=job,
        dry_run=bool(dry_run),
        now=now or started,
        config=cfg,
        retention=policy,
        space_settings=dict(space_data.get("settings") or {}),
        lease=lease,
        failure_hook=failure_hook,
        renew_every_seconds=cfg.runner.renew_every_seconds,
        sample_size=cfg.runner.sample_size,
    )
    status = "ok"
    error: BaseException | None = None
    t0 = time.perf_counter()
    try:
        engine.store.write(
            "consolidate/jobrun_start",
            id=run_id,
            space=space,
            job=job,
            dry_run=bool(dry_run),
            started_at=started,
            holder=lease.holder,
            trigger=trigger,
        )
        try:
            fn(ctx)
        except Exception as exc:
            status = "failed"
            error = exc
            ctx.errors.append(f"{type(exc).__name__}: {exc}")
            log.exception("job %s failed in space %s", job, space)
        duration_ms = round((time.perf_counter() - t0) * 1000.0, 1)
        engine.store.write(
            "consolidate/jobrun_finish",
            id=run_id,
            space=space,
            ended_at=datetime.now(UTC),
            status=status,
            counts=json.dumps(dict(ctx.counts), sort_keys=True),
            errors=list(ctx.errors),
            sample=json.dumps(ctx.sample, default=_jsonable),
            duration_ms=duration_ms,
        )
    finally:
        try:
            lease.release()
        except Exception:  # the lease expires on its own; never hide the job's outcome
            log.warning("could not release the lease of %s in %s", job, space, exc_info=True)
    if error is not None and raise_errors:
        raise error
    return get_run(engine, space, run_id)


def _decode_run(run: dict[str, Any]) -> dict[str, Any]:
    out = dict(run)
    out["counts"] = json.loads(out["counts"]) if out.get("counts") else {}
    out["sample"] = json.loads(out["sample"]) if out.get("sample") else []
    out["errors"] = list(out.get("errors") or [])
    return out


def get_run(engine: Engine, space: str, run_id: str) -> dict[str, Any]:
    rows = engine.store.read("consolidate/jobrun_get", space=space, id=run_id)
    if not rows:
        raise NotFound(f"job run {run_id!r} does not exist in space {space!r}", field="id")
    return _decode_run(rows[0]["run"])


def list_runs(
    engine: Engine, space: str, job: str | None = None, skip: int = 0, limit: int = 50
) -> list[dict[str, Any]]:
    """Runs of the space, newest first (optionally of one job)."""
    spaces.require(engine.store, space)
    if job is not None:
        job_function(job)  # 404 for an unknown job name
    rows = engine.store.read(
        "consolidate/jobrun_list", space=space, job=job, skip=skip, limit=limit
    )
    return [_decode_run(r["run"]) for r in rows]


def run_full_pass(
    engine: Engine,
    space: str,
    *,
    dry_run: bool = False,
    jobs: tuple[str, ...] = JOB_NAMES,
    config: ConsolidationConfig = DEFAULT_CONSOLIDATION_CONFIG,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Run every job once, in pipeline order, and report per-job timings and counts.

    Returns ``{"space", "dry_run", "total_seconds", "jobs": {job: {"seconds", "status",
    "counts", "errors"}}}``. ``retention`` follows its policy's default (a dry run unless the
    space's policy sets ``apply``) unless ``dry_run`` forces one.
    """
    report: dict[str, Any] = {"space": space, "dry_run": dry_run, "jobs": {}}
    t_all = time.perf_counter()
    for job in jobs:
        t0 = time.perf_counter()
        job_dry: bool | None = True if dry_run else None
        if job == "retention" and not dry_run:
            _, policy = effective_config(config, spaces.get(engine.store, space).get("settings"))
            job_dry = not policy.apply
        run = run_job(
            engine, space, job, dry_run=job_dry, trigger="full-pass", config=config, now=now
        )
        report["jobs"][job] = {
            "seconds": round(time.perf_counter() - t0, 3),
            "status": run["status"],
            "dry_run": run["dry_run"],
            "counts": run["counts"],
            "errors": run["errors"],
        }
    report["total_seconds"] = round(time.perf_counter() - t_all, 3)
    return report
