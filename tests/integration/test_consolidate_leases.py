"""Job leases that follow their holder, against a real Neo4j with real threads: a heartbeat
keeps a live runner's lease past its TTL, a crashed runner's lease lapses within one TTL and
its run reads ``interrupted``, a runner that lost its lease stops, and concurrent runners of one
job never both run."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from pipelines.consolidate.config import DEFAULT_CONSOLIDATION_CONFIG, RunnerConfig
from pipelines.consolidate.lease import acquire_lease
from pipelines.consolidate.runner import Runner, get_run, list_runs, run_job
from pipelines.engine import Engine
from pipelines.errors import Busy
from pipelines.ingest.service import IngestResult
from tests.integration import test_consolidate_jobs as jobs
from tests.integration.test_consolidate_jobs import BIOGRAPHY

ingest: Callable[[Engine, str, list[Any]], list[IngestResult]] = jobs.ingest

TTL = 2.0
SHORT = DEFAULT_CONSOLIDATION_CONFIG.model_copy(
    update={"runner": RunnerConfig(lease_ttl_seconds=TTL, renew_every_seconds=0.4)}
)


@pytest.fixture
def bio(engine: Engine, space: str) -> str:
    ingest(engine, space, BIOGRAPHY)
    return space


def test_the_heartbeat_keeps_a_live_runners_lease_past_its_ttl(engine: Engine, bio: str) -> None:
    in_job = threading.Event()
    release = threading.Event()

    def slow_step(label: str) -> None:  # a statement that takes three TTLs
        in_job.set()
        release.wait(10 * TTL)

    result: dict[str, object] = {}
    runner = threading.Thread(
        target=lambda: result.update(
            run_job(
                engine, bio, "decay", config=SHORT, runner=Runner(failure_hook=slow_step)
            ).model_dump()
        )
    )
    runner.start()
    assert in_job.wait(60)
    time.sleep(3 * TTL)
    try:
        assert acquire_lease(engine.store, bio, "decay", "intruder", ttl_seconds=TTL) is None
        with pytest.raises(Busy):
            run_job(engine, bio, "decay", config=SHORT)
    finally:
        release.set()
        runner.join(60)
    assert result["status"] == "ok"
    # released
    assert acquire_lease(engine.store, bio, "decay", "next", ttl_seconds=TTL) is not None


def _crashed_run(engine: Engine, space: str, job: str, holder: str) -> str:
    """A runner takes the lease and records its run, then dies (no heartbeat, no release)."""
    assert acquire_lease(engine.store, space, job, holder, ttl_seconds=TTL) is not None
    run_id = f"crashed-{holder}-{space}"
    engine.store.write(
        "consolidate/jobrun_start",
        id=run_id,
        space=space,
        job=job,
        dry_run=False,
        started_at=datetime.now(UTC),
        holder=holder,
        trigger="test",
    )
    return run_id


def test_a_crashed_runners_run_reads_interrupted_once_its_lease_lapses(
    engine: Engine, bio: str
) -> None:
    run_id = _crashed_run(engine, bio, "merge", "dead-runner")
    assert get_run(engine, bio, run_id).status == "running"
    with pytest.raises(Busy):
        run_job(engine, bio, "merge", config=SHORT)
    time.sleep(TTL + 0.5)
    # the history says so without any new run ...
    assert get_run(engine, bio, run_id).status == "interrupted"
    assert {r.id: r.status for r in list_runs(engine, bio, "merge")}[run_id] == "interrupted"
    # ... the job runs again, and taking a lease stores the status: the dead holder's name
    # holding a live lease again would otherwise make the record read "running"
    assert run_job(engine, bio, "decay", config=SHORT).status == "ok"
    assert acquire_lease(engine.store, bio, "merge", "dead-runner", ttl_seconds=60) is not None
    assert get_run(engine, bio, run_id).status == "interrupted"


def test_a_runner_that_lost_its_lease_stops_at_its_next_checkpoint(
    engine: Engine, bio: str
) -> None:
    def taken_over(label: str) -> None:
        engine.store.write("consolidate/lease_release", space=bio, job="decay", holder="runner-a")
        assert acquire_lease(engine.store, bio, "decay", "runner-b", ttl_seconds=60) is not None
        time.sleep(1.5)  # a few heartbeats: runner-a's renewal finds runner-b's lease

    run = run_job(
        engine,
        bio,
        "decay",
        config=SHORT,
        runner=Runner(holder="runner-a", failure_hook=taken_over),
    )
    assert run.status == "failed"
    assert any("JobAborted" in e for e in run.errors)
    current = engine.store.read("consolidate/lease_get", space=bio, job="decay")
    assert current[0]["holder"] == "runner-b"  # runner-a did not release runner-b's lease


def test_concurrent_runners_of_one_job_never_both_run(engine: Engine, bio: str) -> None:
    active = {"now": 0, "max": 0}
    lock = threading.Lock()

    def working(label: str) -> None:
        with lock:
            active["now"] += 1
            active["max"] = max(active["max"], active["now"])
        time.sleep(0.5)
        with lock:
            active["now"] -= 1

    for _ in range(3):
        barrier = threading.Barrier(2)
        outcomes: list[str] = []

        def attempt(barrier: threading.Barrier = barrier, outcomes: list[str] = outcomes) -> None:
            barrier.wait()
            try:
                run = run_job(
                    engine, bio, "decay", config=SHORT, runner=Runner(failure_hook=working)
                )
                status = str(run.status)
            except Busy:
                status = "busy"
            with lock:
                outcomes.append(status)

        threads = [threading.Thread(target=attempt) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert sorted(outcomes) == ["busy", "ok"]
    assert active["max"] == 1
    assert [r for r in list_runs(engine, bio, "decay") if r.status == "running"] == []
