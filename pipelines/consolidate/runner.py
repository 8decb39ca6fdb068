"""Running a consolidation job: lease, run record, dry run, failure handling.

:func:`run_job` is the only entry point the API, the CLI and the scheduler use:

1. the space must exist and the job must be known;
2. a **lease** (:mod:`pipelines.consolidate.lease`) keeps one runner per job and space, even
   with several API replicas; a heartbeat thread renews it while the job runs, and a crashed
   runner's lease expires within its short TTL (its run record then reads ``interrupted``);
3. a ``(:JobRun)`` node is written *before* any work (status ``running``) and completed with
   counts, errors, a sample of the changes and the duration;
4. the job runs with a :class:`~pipelines.consolidate.context.JobContext`. Jobs write in
   transactions/batches that each leave the graph consistent, and plan from the current graph
   every time, so a run that dies half way is completed by the next one.
   ``JobContext.checkpoint`` is called between batches; it stops a runner that lost its
   lease and calls an optional failure hook (tests use it to simulate a crash).

A dry run plans exactly as a real run and reports what it *would* change, writing nothing but
its own run record.

:func:`run_full_pass` runs every job once and reports per-job timings (benchmarks use it).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

from pipelines import spaces
from pipelines.consolidate import (
    communities,
    decay,
    entity_merge,
    fact_vectors,
    merge,
    retention,
    schemas,
    supersede,
    token_vectors,
    upkeep,
)
from pipelines.consolidate.config import (
    DEFAULT_CONSOLIDATION_CONFIG,
    JOB_NAMES,
    ConsolidationConfig,
    effective_config,
)
from pipelines.consolidate.context import FailureHook, JobContext
from pipelines.consolidate.lease import Lease, acquire_lease
from pipelines.consolidate.records import FullPass, JobRun, PassEntry
from pipelines.engine import Engine
from pipelines.errors import Busy, NotFound
from pipelines.graph import mark
from pipelines.tracing import job_span

log = logging.getLogger("mnemograph.consolidate")

JobFunction = Callable[[JobContext], None]

#: Every job's ``run(ctx)``, by name.
JOBS: dict[str, JobFunction] = {
    "decay": decay.run,
    "merge": merge.run,
    "supersede": supersede.run,
    "entity_merge": entity_merge.run,
    "communities": communities.run,
    "schemas": schemas.run,
    "upkeep": upkeep.run,
    "token_vectors": token_vectors.run,
    "fact_vectors": fact_vectors.run,
    "retention": retention.run,
}

#: Jobs whose default is a dry run (the caller must ask for changes explicitly).
DRY_BY_DEFAULT = frozenset({"retention"})


def job_function(name: str) -> JobFunction:
    """The ``run(ctx)`` function of a job; :class:`NotFound` naming ``job`` otherwise."""
    if name not in JOBS:
        raise NotFound(f"unknown job {name!r}; jobs are: {', '.join(JOB_NAMES)}", field="job")
    return JOBS[name]


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    to_native = getattr(value, "to_native", None)
    if to_native is not None:
        return to_native().isoformat()
    return str(value)


@dataclass(frozen=True, slots=True)
class Runner:
    """Who runs a job and how its failure goes: the trigger its run record names, the lease
    holder's name (a fresh one when ``None``), a hook each checkpoint calls (tests simulate a
    crash with it), and whether a failed job's error propagates once its record is written."""

    trigger: str = "api"
    holder: str | None = None
    failure_hook: FailureHook | None = None
    raise_errors: bool = False


def run_job(
    engine: Engine,
    space: str,
    job: str,
    *,
    dry_run: bool | None = None,
    now: datetime | None = None,
    config: ConsolidationConfig = DEFAULT_CONSOLIDATION_CONFIG,
    runner: Runner = Runner(),
) -> JobRun:
    """Run one job once in one space and return its run record.

    ``dry_run=None`` takes the job's default (a dry run for ``retention``, real otherwise).
    Raises :class:`~pipelines.errors.NotFound` for an unknown space or job and
    :class:`~pipelines.errors.Busy` when another runner holds the lease. A job that fails is
    recorded with status ``failed`` and its error; with ``runner.raise_errors`` the error
    propagates after the record is written.
    """
    fn = job_function(job)
    space_data = spaces.get(engine.store, space)
    cfg, policy = effective_config(config, space_data.get("settings"))
    lease = _lease(engine, space, job, runner.holder, cfg.runner.lease_ttl_seconds)
    started = datetime.now(UTC)
    ctx = JobContext(
        engine=engine,
        space=space,
        job=job,
        dry_run=job in DRY_BY_DEFAULT if dry_run is None else dry_run,
        now=now or started,
        config=cfg,
        retention=policy,
        lease=lease,
        failure_hook=runner.failure_hook,
        sample_size=cfg.runner.sample_size,
    )
    run_id = uuid.uuid4().hex
    finish: list[Callable[[], object]] = []  # the run's last record, written with the release
    with job_span(job, space, run_id) as outcome:
        try:
            lease.start_heartbeat(cfg.runner.heartbeat_seconds)
            error = _recorded(ctx, fn, run_id, started, runner.trigger, finish)
            outcome("ok" if error is None else "failed")
        finally:
            try:
                lease.release(finish[0] if finish else None)
            except Exception as exc:  # retried in the background until done or expired
                log.warning(
                    "could not release the lease of %s in %s (retrying): %s", job, space, exc
                )
                if finish:  # the run wrote its record (and maybe more): its outcome is unknown
                    mark(exc)
                raise
    if error is not None and runner.raise_errors:
        raise error
    return get_run(engine, space, run_id)


def _lease(engine: Engine, space: str, job: str, holder: str | None, ttl: float) -> Lease:
    lease = acquire_lease(engine.store, space, job, holder, ttl)
    if lease is None:
        current = engine.store.read("consolidate/lease_get", space=space, job=job)
        until = current[0]["expires_at"] if current else None
        raise Busy(
            f"job {job!r} is already running in space {space!r} (lease held until {until})",
            field="job",
        )
    return lease


def _recorded(
    ctx: JobContext,
    fn: JobFunction,
    run_id: str,
    started: datetime,
    trigger: str,
    finish: list[Callable[[], object]],
) -> Exception | None:
    """Run ``fn`` after the start of its run record; returns its error and puts the write of
    the record's end in ``finish`` (the lease's release writes it first)."""
    store = ctx.store
    assert ctx.lease is not None
    spaces.write_locked(
        store,
        ctx.space,
        "consolidate/jobrun_start",
        id=run_id,
        job=ctx.job,
        dry_run=ctx.dry_run,
        started_at=started,
        holder=ctx.lease.holder,
        trigger=trigger,
    )
    status, error = "ok", None
    t0 = time.perf_counter()
    try:
        fn(ctx)
    except Exception as exc:
        status, error = "failed", exc
        ctx.errors.append(f"{type(exc).__name__}: {exc}")
        log.exception("job %s failed in space %s", ctx.job, ctx.space)
    finish.append(
        partial(
            store.write,
            "consolidate/jobrun_finish",
            id=run_id,
            space=ctx.space,
            ended_at=datetime.now(UTC),
            status=status,
            counts=json.dumps(dict(ctx.counts), sort_keys=True),
            errors=list(ctx.errors),
            sample=json.dumps(ctx.sample, default=_jsonable),
            duration_ms=round((time.perf_counter() - t0) * 1000.0, 1),
        )
    )
    return error


def _decode_run(run: dict[str, Any]) -> JobRun:
    out = dict(run)
    out["counts"] = json.loads(out["counts"]) if out.get("counts") else {}
    out["sample"] = json.loads(out["sample"]) if out.get("sample") else []
    out["errors"] = list(out.get("errors") or [])
    return JobRun.model_validate(out)


def get_run(engine: Engine, space: str, run_id: str) -> JobRun:
    rows = engine.store.read("consolidate/jobrun_get", space=space, id=run_id)
    if not rows:
        spaces.require(engine.store, space)  # erased meanwhile: "space not found"
        raise NotFound(f"job run {run_id!r} does not exist in space {space!r}", field="id")
    return _decode_run(rows[0]["run"])


def list_runs(
    engine: Engine, space: str, job: str | None = None, skip: int = 0, limit: int = 50
) -> list[JobRun]:
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
) -> FullPass:
    """Run every job once, in pipeline order, and report per-job timings and counts.

    ``retention`` follows its policy's default (a dry run unless the space's policy sets
    ``apply``) unless ``dry_run`` forces one.
    """
    entries: dict[str, PassEntry] = {}
    t_all = time.perf_counter()
    for job in jobs:
        t0 = time.perf_counter()
        job_dry: bool | None = True if dry_run else None
        if job == "retention" and not dry_run:
            _, policy = effective_config(config, spaces.get(engine.store, space).get("settings"))
            job_dry = not policy.apply
        run = run_job(
            engine, space, job, dry_run=job_dry, now=now, config=config, runner=Runner("full-pass")
        )
        entries[job] = PassEntry(
            seconds=round(time.perf_counter() - t0, 3),
            status=run.status,
            dry_run=run.dry_run,
            counts=run.counts,
            errors=run.errors,
        )
    return FullPass(
        space=space,
        dry_run=dry_run,
        total_seconds=round(time.perf_counter() - t_all, 3),
        jobs=entries,
    )
