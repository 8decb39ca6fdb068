"""Crash trials: kill -9 of Neo4j and of the API mid-ingest and mid-job, with acknowledged-write
accounting.

    python -m benchmarks chaos [--neo4j-trials 20] [--api-trials 10] [--writers 2] ...

Set-up: a fresh Neo4j and the API as separate processes on 127.0.0.1 (:mod:`benchmarks.served`),
a space ``chaos-ingest`` the writers post to and a space ``chaos-job`` seeded with LoCoMo
conversations for the job trials. Every trial alternates between two modes:

* **ingest**: ``--writers`` threads post 20-turn sessions (LoCoMo text, new ids) without pause;
  after a random 1.5-4 s the target process gets SIGKILL;
* **job**: the same writers, plus one consolidation job (``--job``) started over HTTP; the
  target is killed while the job is in flight (at a random 10-40 % of the job's shortest
  duration seen so far; the trial records whether it was still in flight).

**Neo4j trials**: Neo4j stays down ``--down-seconds`` and is restarted (``neo4j_runtime``). From
the kill until Neo4j is ready again, a probe is launched every 0.5 s (a space read, a recall, a
one-memory write in turn) and ``/readyz`` every second; each probe's time to its answer, and
its status, are recorded (the bar: 503 within 2 s). Once Neo4j is ready, *recovery* is the time
until a read and a write both succeed (the writers pause at the kill, so recovery is measured
without them holding both ingest slots, and resume for 1.5-4 s after it). **API trials**: the
API is restarted (its restart time is reported). After a job trial, the harness posts the same
job again every 5 s until it runs (``lease_blocked_s``, counted from the API's kill, or from
Neo4j being ready again; the retries stop after ``--lease-wait`` s, when the stale lease is
removed by the harness and the trial says so) and reads the killed run's status from the jobs
history.

**Accounting**, after every trial and once more at the end: every turn of every session the API
acknowledged (201) must be readable (``GET /memories/{id}``); any other session that reached the
server must be all or nothing (a *partial* session has some but not all of its turns; a
connection refused never reached it). Every response is classified;
a 5xx whose body is not the documented JSON error counts as a *plain-text 500*.

Results: ``benchmarks/results/<name>.{json,md}`` with the machine, load average, commit and
command; each trial is also appended to ``<data dir>/trials.jsonl`` as it ends.
"""

from __future__ import annotations

import argparse
import json
import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from benchmarks import campaign, machine
from benchmarks.served import (
    ApiProcess,
    Neo4jProcess,
    Outcome,
    call,
    percentile,
)

INGEST_SPACE = "chaos-ingest"
JOB_SPACE = "chaos-job"


def add_arguments(p: argparse.ArgumentParser) -> None:
    campaign.add_common(p, "chaos", neo4j_port=7698, api_port=8698)
    p.add_argument("--neo4j-trials", type=int, default=20)
    p.add_argument("--api-trials", type=int, default=10)
    p.add_argument("--writers", type=int, default=2, help="concurrent session writers")
    p.add_argument("--turns", type=int, default=20, help="turns per posted session")
    p.add_argument("--down-seconds", type=float, default=5.0, help="Neo4j stays dead this long")
    p.add_argument("--job", default="communities", help="the consolidation job of job trials")
    p.add_argument(
        "--job-conversations", type=int, default=2, help="LoCoMo conversations in the job space"
    )
    p.add_argument("--request-timeout", type=float, default=120.0, help="client timeout, s")
    p.add_argument(
        "--lease-wait", type=float, default=150.0, help="longest wait for a job to run again, s"
    )


# --------------------------------------------------------------------------- workload


@dataclass
class Attempt:
    trial: int
    session_id: str
    turn_ids: list[str]
    status: int | str
    seconds: float
    plain_5xx: bool
    started: float = 0.0  # time.monotonic() when it was sent
    code: str = ""  # the error code of a failed answer
    may_have_committed: bool | None = None  # what a 503 said (None: not said)


@dataclass
class Probe:
    kind: str
    started: float
    outcome: Outcome | None = None


class Recorder:
    """Every response the campaign saw, by status; plain-text 5xx counted apart."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.statuses: Counter[str] = Counter()
        self.plain_5xx: list[dict[str, Any]] = []

    def add(self, what: str, outcome: Outcome) -> None:
        with self.lock:
            self.statuses[str(outcome.status)] += 1
            if "readyz" in what and isinstance(outcome.body, dict) and "ready" in outcome.body:
                return  # the readiness document is /readyz's own documented 503 body
            if outcome.plain_5xx and len(self.plain_5xx) < 50:
                self.plain_5xx.append(
                    {"request": what, "status": outcome.status, "body": str(outcome.body)[:300]}
                )
            elif outcome.plain_5xx:
                self.plain_5xx.append({"request": what, "status": outcome.status})


class Writers:
    """``n`` threads posting new sessions to :data:`INGEST_SPACE` until stopped."""

    def __init__(
        self,
        base_url: str,
        trial: int,
        n: int,
        turns: int,
        text: Iterator[campaign.Line],
        recorder: Recorder,
        timeout: float,
    ) -> None:
        self.base_url = base_url
        self.trial = trial
        self.turns = turns
        self.text = text
        self.text_lock = threading.Lock()
        self.recorder = recorder
        self.timeout = timeout
        self.stop = threading.Event()
        self.running = threading.Event()  # cleared: the writers pause between sessions
        self.running.set()
        self.attempts: list[Attempt] = []
        self.lock = threading.Lock()
        self.threads = [
            threading.Thread(target=self._run, args=(w,), daemon=True) for w in range(n)
        ]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def join(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(self.timeout + 30)

    def _chunk(self) -> list[campaign.Line]:
        with self.text_lock:
            return [next(self.text) for _ in range(self.turns)]

    def _run(self, w: int) -> None:
        k = 0
        with httpx.Client(base_url=self.base_url, timeout=self.timeout) as client:
            while not self.stop.is_set():
                if not self.running.wait(0.2):
                    continue
                sid = f"c{self.trial}-w{w}-s{k}-{uuid.uuid4().hex[:6]}"
                k += 1
                body = campaign.turns_body(sid, self._chunk(), sid)
                sent = time.monotonic()
                out = call(client, "POST", f"/v1/spaces/{INGEST_SPACE}/sessions", body)
                self.recorder.add("POST sessions", out)
                ids = [t["id"] for t in body["turns"]]
                attempt = Attempt(self.trial, sid, ids, out.status, out.seconds, out.plain_5xx)
                attempt.started, attempt.code = sent, _error_code(out)
                attempt.may_have_committed = _may_have_committed(out)
                with self.lock:
                    self.attempts.append(attempt)
                if not out.ok:
                    time.sleep(0.5)  # the server is down or refusing: do not spin


class Prober:
    """While active: a probe every ``interval`` s, each in its own thread (open loop), so a
    hanging request never delays the next probe."""

    KINDS = ("read", "recall", "write")

    def __init__(self, base_url: str, recorder: Recorder, timeout: float) -> None:
        self.base_url = base_url
        self.recorder = recorder
        self.timeout = timeout
        self.probes: list[Probe] = []
        self.readyz: list[Probe] = []
        self.active = threading.Event()
        self.threads: list[threading.Thread] = []
        self._loop: threading.Thread | None = None

    def start(self) -> None:
        self.active.set()
        self._loop = threading.Thread(target=self._launch, daemon=True)
        self._loop.start()

    def stop_launching(self) -> None:
        self.active.clear()
        if self._loop is not None:
            self._loop.join()

    def join(self) -> None:
        for t in self.threads:
            t.join(self.timeout + 30)

    def _launch(self) -> None:
        i = 0
        while self.active.is_set():
            kind = self.KINDS[i % len(self.KINDS)]
            probe = Probe(kind, time.monotonic())
            self.probes.append(probe)
            self._spawn(probe)
            if i % 2 == 0:
                rz = Probe("readyz", time.monotonic())
                self.readyz.append(rz)
                self._spawn(rz)
            i += 1
            time.sleep(0.5)

    def _spawn(self, probe: Probe) -> None:
        t = threading.Thread(target=self._one, args=(probe,), daemon=True)
        self.threads.append(t)
        t.start()

    def _one(self, probe: Probe) -> None:
        with httpx.Client(base_url=self.base_url, timeout=self.timeout) as client:
            probe.outcome = probe_call(client, probe.kind)
        self.recorder.add(f"probe {probe.kind}", probe.outcome)


def probe_call(client: httpx.Client, kind: str, timeout: float | None = None) -> Outcome:
    if kind == "read":
        return call(client, "GET", f"/v1/spaces/{INGEST_SPACE}", timeout=timeout)
    if kind == "recall":
        body = {"query": "what did they talk about?", "k": 5, "touch": False}
        return call(client, "POST", f"/v1/spaces/{INGEST_SPACE}/recall", body, timeout=timeout)
    if kind == "write":
        mid = f"probe-{uuid.uuid4().hex[:12]}"
        body = {"memories": [{"id": mid, "content": "a probe note written during a fault"}]}
        return call(client, "POST", f"/v1/spaces/{INGEST_SPACE}/memories", body, timeout=timeout)
    return call(client, "GET", "/readyz", timeout=timeout)


def wait_recovered(
    base_url: str, recorder: Recorder, cap: float
) -> tuple[float | None, Counter[str]]:
    """Seconds until a read and a write both succeed (``None`` past ``cap``), and what the
    failed attempts answered (status and error code)."""
    t0 = time.monotonic()
    failures: Counter[str] = Counter()
    with httpx.Client(base_url=base_url) as client:
        while time.monotonic() - t0 < cap:
            for kind in ("read", "write"):
                out = probe_call(client, kind, timeout=10.0)
                recorder.add(f"recovery {kind}", out)
                if not out.ok:
                    failures[f"{kind} {out.status} {_error_code(out)}"] += 1
                    break
            else:
                return time.monotonic() - t0, failures
            time.sleep(0.1)
    return None, failures


def _error_code(out: Outcome) -> str:
    error = out.body.get("error") if isinstance(out.body, dict) else None
    return str(error.get("code")) if isinstance(error, dict) else ""


def _may_have_committed(out: Outcome) -> bool | None:
    """What a 503/504 body says of its work (``None``: another status, or not said)."""
    error = out.body.get("error") if isinstance(out.body, dict) else None
    value = error.get("may_have_committed") if isinstance(error, dict) else None
    return value if isinstance(value, bool) else None


def first_write(base_url: str, recorder: Recorder) -> dict[str, Any]:
    """The first write once Neo4j is ready again: its time to an answer and the answer."""
    with httpx.Client(base_url=base_url) as client:
        out = probe_call(client, "write", timeout=60.0)
    recorder.add("first write after restart", out)
    return {
        "seconds": _r(out.seconds),
        "status": out.status,
        "code": _error_code(out),
        "may_have_committed": _may_have_committed(out),
    }


def in_flight_at(attempts: list[Attempt], t_kill: float) -> list[dict[str, Any]]:
    """The writes sent before the kill and answered after it: time from the kill to the
    answer, the answer, and what a 503 said of its work."""
    return [
        {
            "after_kill_s": _r(a.started + a.seconds - t_kill),
            "status": a.status,
            "code": a.code,
            "may_have_committed": a.may_have_committed,
        }
        for a in attempts
        if a.started < t_kill < a.started + a.seconds
    ]


# --------------------------------------------------------------------------- accounting


def account(base_url: str, attempts: list[Attempt], recorder: Recorder) -> dict[str, Any]:
    """Acknowledged turns that cannot be read back, and sessions stored in part."""
    lost_turns = 0
    partial: list[str] = []
    unacked_stored = 0
    unreadable: list[str] = []
    said_nothing_but_stored: list[str] = []
    refused = [a for a in attempts if a.status == "conn_refused"]
    with httpx.Client(base_url=base_url, timeout=30.0) as client:
        for a in attempts:
            if a.status == "conn_refused":  # never reached the server: nothing to look for
                continue
            found = 0
            for tid in a.turn_ids:
                status = _memory_status(client, tid, recorder)
                if status == 200:
                    found += 1
                elif status != 404:
                    unreadable.append(tid)
            acked = a.status == 201
            if acked and found < len(a.turn_ids):
                lost_turns += len(a.turn_ids) - found
            if not acked and 0 < found < len(a.turn_ids):
                partial.append(a.session_id)
            if not acked and found == len(a.turn_ids):
                unacked_stored += 1
            if a.may_have_committed is False and found:
                said_nothing_but_stored.append(a.session_id)
    return {
        "sessions": len(attempts),
        "acknowledged_sessions": sum(a.status == 201 for a in attempts),
        "acknowledged_turns": sum(len(a.turn_ids) for a in attempts if a.status == 201),
        "lost_turns": lost_turns,
        "partial_sessions": partial,
        "unacknowledged_but_stored": unacked_stored,
        "said_not_committed_but_stored": said_nothing_but_stored,
        "said_may_have_committed": sum(a.may_have_committed is True for a in attempts),
        "said_not_committed": sum(a.may_have_committed is False for a in attempts),
        "refused_before_sending": len(refused),
        "unreadable_turns": unreadable[:20],
    }


def _memory_status(client: httpx.Client, tid: str, recorder: Recorder) -> int | str:
    out = Outcome("conn_error", 0.0)
    for _ in range(5):
        out = call(client, "GET", f"/v1/spaces/{INGEST_SPACE}/memories/{tid}")
        if out.status in (200, 404):
            return out.status
        recorder.add("accounting read", out)
        time.sleep(1.0)
    return out.status


# --------------------------------------------------------------------------- jobs


class JobCall:
    """One job run over HTTP in a background thread."""

    def __init__(self, base_url: str, job: str, recorder: Recorder, timeout: float) -> None:
        self.outcome: Outcome | None = None
        self.started = time.monotonic()
        self._thread = threading.Thread(
            target=self._run, args=(base_url, job, recorder, timeout), daemon=True
        )
        self._thread.start()

    def _run(self, base_url: str, job: str, recorder: Recorder, timeout: float) -> None:
        with httpx.Client(base_url=base_url, timeout=timeout) as client:
            self.outcome = call(client, "POST", f"/v1/spaces/{JOB_SPACE}/jobs/{job}", {})
        recorder.add(f"POST jobs/{job}", self.outcome)

    @property
    def in_flight(self) -> bool:
        return self._thread.is_alive()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


def wait_job_runs_again(
    ctx: Context, trial_started_wall: str, kill_wall: str, cap: float, since: float
) -> dict[str, Any]:
    """Post the job every 5 s until it runs (seconds counted from ``since``: the API's kill, or
    Neo4j ready again); then read the killed run's status."""
    t0 = time.monotonic()
    blocked: float | None = None
    answers: Counter[str] = Counter()
    with httpx.Client(base_url=ctx.api.base_url, timeout=ctx.args.request_timeout) as client:
        while time.monotonic() - t0 < cap:
            out = call(client, "POST", f"/v1/spaces/{JOB_SPACE}/jobs/{ctx.args.job}", {})
            ctx.recorder.add(f"POST jobs/{ctx.args.job} (again)", out)
            answers[str(out.status)] += 1
            if out.ok:
                blocked = time.monotonic() - since
                ctx.job_seconds = min(ctx.job_seconds, out.seconds)
                break
            time.sleep(5.0)
        cleared = False
        if blocked is None:  # still locked: free it so the next trial can run the job
            ctx.clear_lease()
            cleared = True
        runs = call(client, "GET", f"/v1/spaces/{JOB_SPACE}/jobs?job={ctx.args.job}&limit=20")
    killed = [
        r
        for r in ((runs.body or {}).get("runs") or [])
        if trial_started_wall <= str(r.get("started_at") or "") <= kill_wall
        and r.get("trigger") == "api"
    ]  # a run started after the kill is a later one, not the killed job's
    killed.sort(key=lambda r: str(r.get("started_at")))
    return {
        "lease_blocked_s": None if blocked is None else round(blocked, 1),
        "lease_cleared_by_harness": cleared,
        "retry_answers": dict(answers),
        "killed_run_status": killed[0]["status"] if killed else None,
        "job_run_started_before_kill": bool(killed),
    }


# --------------------------------------------------------------------------- trials


@dataclass
class Context:
    args: argparse.Namespace
    neo: Neo4jProcess
    api: ApiProcess
    recorder: Recorder
    text: Iterator[campaign.Line]
    rng: random.Random
    job_seconds: float
    attempts: list[Attempt] = field(default_factory=list)

    def clear_lease(self) -> None:
        """Remove the job's lease node directly (the trial records that it had to)."""
        from neo4j import GraphDatabase

        from benchmarks.cypher import LIBRARY

        with GraphDatabase.driver(self.neo.uri, auth=self.neo.instance.auth) as driver:
            driver.execute_query(
                LIBRARY.load("chaos_clear_lease"),
                {"space": JOB_SPACE, "job": self.args.job},
                database_="neo4j",
            )


def _summary(values: list[float]) -> dict[str, Any]:
    return {
        "n": len(values),
        "p50": _r(percentile(values, 50)),
        "p95": _r(percentile(values, 95)),
        "max": _r(max(values) if values else None),
    }


def _is_2xx(status: int | str) -> bool:
    return isinstance(status, int) and 200 <= status < 300


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def run_trial(ctx: Context, index: int, target: str, mode: str) -> dict[str, Any]:
    args = ctx.args
    writers = Writers(
        ctx.api.base_url,
        index,
        args.writers,
        args.turns,
        ctx.text,
        ctx.recorder,
        args.request_timeout,
    )
    wall = machine.now_iso()
    trial: dict[str, Any] = {"index": index, "target": target, "mode": mode, "started_at": wall}
    writers.start()
    job: JobCall | None = None
    if mode == "job":
        time.sleep(0.5)
        job = JobCall(ctx.api.base_url, args.job, ctx.recorder, args.request_timeout)
        delay = ctx.rng.uniform(0.1, 0.4) * ctx.job_seconds
    else:
        delay = ctx.rng.uniform(1.5, 4.0)
    time.sleep(delay)
    trial["kill_after_s"] = round(delay, 2)
    trial["job_in_flight_at_kill"] = job.in_flight if job is not None else None
    t_kill = time.monotonic()
    kill_wall = datetime.now(UTC).isoformat()  # to the microsecond, as runs record it
    t_service = t_kill  # when the lease clock starts: the kill, or Neo4j ready again
    if target == "neo4j":
        prober = Prober(ctx.api.base_url, ctx.recorder, args.request_timeout)
        ctx.neo.kill9()
        writers.running.clear()  # paused until recovery is measured: it is not raced
        prober.start()
        time.sleep(args.down_seconds)
        t_restart = time.monotonic()
        trial["neo4j_restart_s"] = round(ctx.neo.start(), 1)
        t_service = time.monotonic()
        prober.stop_launching()
        trial["neo4j_down_s"] = round(time.monotonic() - t_kill, 1)
        trial["first_write"] = first_write(ctx.api.base_url, ctx.recorder)
        recovered, failures = wait_recovered(ctx.api.base_url, ctx.recorder, cap=120.0)
        trial["recovery_s"] = _r(recovered)
        trial["recovery_failures"] = dict(failures)
        writers.running.set()  # sessions acknowledged after the restart are accounted too
        time.sleep(ctx.rng.uniform(1.5, 4.0))
        prober.join()
        trial["probes"] = [
            {
                "kind": p.kind,
                "seconds": _r(p.outcome.seconds),
                "status": p.outcome.status,
                # the process was dead when the probe left, or Neo4j was starting up
                "phase": "dead" if p.started < t_restart else "starting",
                "sent_after_kill_s": _r(p.started - t_kill),
            }
            for p in prober.probes + prober.readyz
            if p.outcome is not None
        ]
    else:
        ctx.api.kill9()
        trial["api_restart_s"] = round(ctx.api.start(), 1)
    writers.join()
    trial["in_flight"] = in_flight_at(writers.attempts, t_kill)
    if job is not None:
        job.join(args.request_timeout + 30)
        trial["job_answer"] = job.outcome.status if job.outcome is not None else None
        if job.outcome is not None and job.started + job.outcome.seconds > t_kill:
            trial["job_answer_after_kill_s"] = _r(job.started + job.outcome.seconds - t_kill)
            trial["job_may_have_committed"] = _may_have_committed(job.outcome)
        trial.update(wait_job_runs_again(ctx, wall, kill_wall, args.lease_wait, t_service))
    ctx.attempts.extend(writers.attempts)
    trial["accounting"] = account(ctx.api.base_url, writers.attempts, ctx.recorder)
    trial["write_statuses"] = dict(Counter(str(a.status) for a in writers.attempts))
    return trial


# --------------------------------------------------------------------------- set-up and report


def _seed_job_space(api: ApiProcess, n_conv: int, recorder: Recorder, timeout: float) -> None:
    dataset = campaign.locomo_dataset()
    with httpx.Client(base_url=api.base_url, timeout=timeout) as client:
        for space in (INGEST_SPACE, JOB_SPACE):
            out = call(client, "POST", "/v1/spaces", {"id": space})
            if out.status not in (200, 201):
                raise SystemExit(f"could not create space {space}: {out.status} {out.body}")
        for ci, conv in enumerate(dataset.conversations[:n_conv]):
            for si, session in enumerate(conv.sessions):
                sid = f"seed-c{ci}-s{si}"
                body = campaign.session_body(session, sid, sid)
                out = call(client, "POST", f"/v1/spaces/{JOB_SPACE}/sessions", body)
                recorder.add("seed", out)
                if out.status != 201:
                    raise SystemExit(f"seeding failed: {out.status} {out.body}")


def _time_job(api: ApiProcess, job: str, timeout: float) -> float:
    with httpx.Client(base_url=api.base_url, timeout=timeout) as client:
        out = call(client, "POST", f"/v1/spaces/{JOB_SPACE}/jobs/{job}", {})
    if not out.ok:
        raise SystemExit(f"the {job} job did not run before the trials: {out.status} {out.body}")
    return out.seconds


def summarise(trials: list[dict[str, Any]], final: dict[str, Any], rec: Recorder) -> dict[str, Any]:
    neo = [t for t in trials if t["target"] == "neo4j"]
    api = [t for t in trials if t["target"] == "api"]
    down = [p for t in neo for p in t.get("probes", []) if p["kind"] != "readyz"]
    readyz = [p for t in neo for p in t.get("probes", []) if p["kind"] == "readyz"]
    to_503 = [p["seconds"] for p in down if p["status"] == 503]
    recovery = [t["recovery_s"] for t in neo if t.get("recovery_s") is not None]
    jobs = [t for t in trials if t["mode"] == "job"]
    lost = sum(t["accounting"]["lost_turns"] for t in trials)
    partial = sum(len(t["accounting"]["partial_sessions"]) for t in trials)
    p95_down = percentile([p["seconds"] for p in down], 95)
    in_flight = [x for t in neo for x in t.get("in_flight", [])]
    firsts = [t["first_write"] for t in neo if "first_write" in t]
    late_writes = [p for p in down if p["kind"] == "write" and p.get("phase") == "starting"]
    said_nothing = sum(len(t["accounting"]["said_not_committed_but_stored"]) for t in trials)
    return {
        "neo4j_trials": len(neo),
        "api_trials": len(api),
        "acknowledged_sessions": sum(t["accounting"]["acknowledged_sessions"] for t in trials),
        "acknowledged_turns": sum(t["accounting"]["acknowledged_turns"] for t in trials),
        "lost_turns": lost,
        "lost_turns_final_check": final["lost_turns"],
        "partial_sessions": partial,
        "partial_sessions_final_check": len(final["partial_sessions"]),
        "plain_text_5xx": len(rec.plain_5xx),
        "statuses": dict(rec.statuses),
        "down_probe_seconds": _summary([p["seconds"] for p in down]),
        "down_probe_statuses": dict(Counter(str(p["status"]) for p in down)),
        "time_to_503_seconds": _summary(to_503),
        "down_probe_by_phase": {
            phase: {
                "seconds": _summary([p["seconds"] for p in down if p.get("phase") == phase]),
                "statuses": dict(
                    Counter(str(p["status"]) for p in down if p.get("phase") == phase)
                ),
                "slower_than_2s": dict(
                    Counter(
                        f"{p['kind']} {p['status']}"
                        for p in down
                        if p.get("phase") == phase and p["seconds"] > 2.0
                    )
                ),
            }
            for phase in ("dead", "starting")
        },
        "readyz_down_seconds": _summary([p["seconds"] for p in readyz]),
        "readyz_down_statuses": dict(Counter(str(p["status"]) for p in readyz)),
        "recovery_seconds": _summary(recovery),
        "in_flight_writes_seconds_after_kill": _summary([x["after_kill_s"] for x in in_flight]),
        "in_flight_writes_answers": dict(
            Counter(f"{x['status']} {x['code']} {x['may_have_committed']}" for x in in_flight)
        ),
        "first_write_seconds": _summary([f["seconds"] for f in firsts]),
        "first_write_answers": dict(
            Counter(f"{f['status']} {f['code']} {f['may_have_committed']}" for f in firsts)
        ),
        "writes_while_starting_seconds": _summary([p["seconds"] for p in late_writes]),
        "said_not_committed_but_stored": said_nothing,
        "said_may_have_committed": sum(
            t["accounting"].get("said_may_have_committed", 0) for t in trials
        ),
        "said_not_committed": sum(t["accounting"].get("said_not_committed", 0) for t in trials),
        "recoveries_missing": sum(t.get("recovery_s") is None for t in neo),
        "recovery_failures": dict(
            sum((Counter(t.get("recovery_failures", {})) for t in neo), Counter())
        ),
        "api_restart_seconds": _summary([t["api_restart_s"] for t in api]),
        "job_trials": len(jobs),
        "job_in_flight_at_kill": sum(bool(t.get("job_in_flight_at_kill")) for t in jobs),
        "job_run_started_before_kill": sum(
            bool(t.get("job_run_started_before_kill")) for t in jobs
        ),
        "lease_blocked_seconds": [t.get("lease_blocked_s") for t in jobs],
        "leases_cleared_by_harness": sum(bool(t.get("lease_cleared_by_harness")) for t in jobs),
        "killed_run_statuses": dict(Counter(str(t.get("killed_run_status")) for t in jobs)),
        "bars": {
            "0 acknowledged turns lost": lost == 0 and final["lost_turns"] == 0,
            "0 partial sessions": partial == 0 and not final["partial_sessions"],
            "0 plain-text 500s": not rec.plain_5xx,
            # a probe sent while Neo4j restarts may already succeed; any other answer fails
            "p95 time to a 503 while down <= 2 s": (
                bool(down)
                and all(p["status"] == 503 or _is_2xx(p["status"]) for p in down)
                and p95_down is not None
                and p95_down <= 2.0
            ),
            "in-flight writes answered <= 2 s after Neo4j dies": (
                bool(in_flight) and max(x["after_kill_s"] for x in in_flight) <= 2.0
            ),
            "first write after the restart answers <= 5 s (201, or 503 nothing written)": (
                bool(firsts)
                and all(
                    f["seconds"] <= 5.0
                    and (
                        _is_2xx(f["status"])
                        or (f["status"] == 503 and f["may_have_committed"] is False)
                    )
                    for f in firsts
                )
            ),
            "every 503 saying nothing was written wrote nothing": said_nothing == 0,
            "recovery <= 5 s after Neo4j is ready": (
                bool(recovery)
                and not any(t.get("recovery_s") is None for t in neo)
                and max(recovery) <= 5.0
            ),
            "a killed job's lease frees within 120 s and its run says interrupted": (
                bool(jobs)
                and all(
                    t.get("lease_blocked_s") is not None and t["lease_blocked_s"] <= 120.0
                    for t in jobs
                )
                and all(  # a run the kill interrupted (not a request still queued)
                    t.get("killed_run_status") in ("interrupted", "failed")
                    for t in jobs
                    if t.get("job_run_started_before_kill")
                )
            ),
        },
    }


def markdown(result: dict[str, Any]) -> str:
    s = result["summary"]
    out = [f"# Benchmark `{result['name']}` (chaos: kill -9 of Neo4j and of the API)", ""]
    out += campaign.header_lines(result)
    out += ["", *campaign.bars_table(s["bars"])]
    out += [
        "",
        "## Figures",
        "",
        f"- trials: {s['neo4j_trials']} of Neo4j, {s['api_trials']} of the API "
        f"({s['job_trials']} mid-job, the job in flight at the kill in "
        f"{s['job_in_flight_at_kill']}, its run started before the kill in "
        f"{s['job_run_started_before_kill']})",
        f"- acknowledged: {s['acknowledged_sessions']} sessions, {s['acknowledged_turns']} turns; "
        f"lost: {s['lost_turns']} (final check {s['lost_turns_final_check']}); partial sessions: "
        f"{s['partial_sessions']} (final check {s['partial_sessions_final_check']})",
        f"- plain-text 5xx: {s['plain_text_5xx']}; every response by status: {s['statuses']}",
        f"- requests while Neo4j was down: seconds to an answer {s['down_probe_seconds']}, "
        f"statuses {s['down_probe_statuses']}; time to a 503 {s['time_to_503_seconds']}",
        *(
            f"  - sent while Neo4j was {phase}: seconds {v['seconds']}, statuses "
            f"{v['statuses']}, slower than 2 s {v['slower_than_2s']}"
            for phase, v in s.get("down_probe_by_phase", {}).items()
        ),
        f"- /readyz while down: {s['readyz_down_seconds']}, statuses {s['readyz_down_statuses']}",
        f"- recovery after Neo4j was ready: {s['recovery_seconds']} "
        f"(never within 120 s: {s['recoveries_missing']}); what the recovery attempts answered "
        f"before it: {s['recovery_failures']}",
        f"- writes in flight at a Neo4j kill: seconds from the kill to the answer "
        f"{s.get('in_flight_writes_seconds_after_kill')}, answers (status, code, "
        f"may_have_committed) {s.get('in_flight_writes_answers')}",
        f"- first write once Neo4j is ready again: seconds {s.get('first_write_seconds')}, "
        f"answers {s.get('first_write_answers')}; writes sent while Neo4j was starting: "
        f"seconds {s.get('writes_while_starting_seconds')}",
        f"- 503s of writers saying may_have_committed true: {s.get('said_may_have_committed')}, "
        f"false: {s.get('said_not_committed')}; false but the session was stored: "
        f"{s.get('said_not_committed_but_stored')}",
        f"- API restart: {s['api_restart_seconds']}",
        f"- job trials: seconds until the job ran again {s['lease_blocked_seconds']} (None: not "
        f"within the cap, lease removed by the harness: {s['leases_cleared_by_harness']}); "
        f"killed runs' status in the history {s['killed_run_statuses']}",
        "",
        "## Trials",
        "",
        "| # | target | mode | kill after s | down s | recovery s | restart s | acked | lost "
        "| partial | writes by status | job blocked s | killed run |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for t in result["trials"]:
        a = t["accounting"]
        out.append(
            f"| {t['index']} | {t['target']} | {t['mode']} | {t['kill_after_s']} "
            f"| {t.get('neo4j_down_s', '')} | {t.get('recovery_s', '')} "
            f"| {t.get('neo4j_restart_s', t.get('api_restart_s', ''))} "
            f"| {a['acknowledged_sessions']} | {a['lost_turns']} | {len(a['partial_sessions'])} "
            f"| {t['write_statuses']} | {t.get('lease_blocked_s', '')} "
            f"| {t.get('killed_run_status', '')} |"
        )
    if result["plain_5xx_samples"]:
        out += ["", "## Plain-text 5xx (first ones)", ""]
        out += [f"- {x}" for x in result["plain_5xx_samples"][:10]]
    return "\n".join(out) + "\n"


def main(args: argparse.Namespace) -> int:
    recorder = Recorder()
    trials: list[dict[str, Any]] = []
    with campaign.served(args, "chaos") as srv:
        neo, api = srv.neo, srv.api
        _seed_job_space(api, args.job_conversations, recorder, args.request_timeout)
        job_seconds = _time_job(api, args.job, args.request_timeout)
        print(f"chaos: seeded; the {args.job} job takes {job_seconds:.1f}s", flush=True)
        lines = campaign.lines(campaign.locomo_dataset())
        ctx = Context(args, neo, api, recorder, lines, random.Random(args.seed), job_seconds)
        plan = [("neo4j", "ingest" if i % 2 == 0 else "job") for i in range(args.neo4j_trials)]
        plan += [("api", "ingest" if i % 2 == 0 else "job") for i in range(args.api_trials)]
        for i, (target, mode) in enumerate(plan):
            t = run_trial(ctx, i, target, mode)
            trials.append(t)
            print(
                f"trial {i + 1}/{len(plan)} {target}/{mode}: acked "
                f"{t['accounting']['acknowledged_sessions']}, lost "
                f"{t['accounting']['lost_turns']}, partial "
                f"{len(t['accounting']['partial_sessions'])}, recovery {t.get('recovery_s')}, "
                f"job blocked {t.get('lease_blocked_s')}",
                flush=True,
            )
            with open(srv.base / "trials.jsonl", "a") as out:  # survives an interrupted run
                out.write(json.dumps(t, default=str) + "\n")
            time.sleep(2.0)
        print("chaos: final accounting of every acknowledged turn …", flush=True)
        final = account(api.base_url, ctx.attempts, recorder)
    result = campaign.finish(
        args,
        srv,
        "chaos",
        {
            "final_check": final,
            "summary": summarise(trials, final, recorder),
            "plain_5xx_samples": recorder.plain_5xx[:50],
            "trials": trials,
        },
    )
    files = campaign.write(result, markdown(result), args.out_dir)
    print(f"wrote {files['json']} and {files['md']}")
    print(result["summary"]["bars"])
    return 0
