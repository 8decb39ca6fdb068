"""Open-loop mixed load on loopback: the capacity, then twice the capacity for a fixed time.

    python -m benchmarks load [--spaces 50] [--duration 300] [--step-seconds 30] ...

Set-up: a fresh Neo4j and the API as separate processes on 127.0.0.1 (:mod:`benchmarks.served`);
``--spaces`` spaces each holding one LoCoMo conversation (conversation ``i mod 10``), posted
session by session through the API (``--reuse-data`` keeps a seeded database).

Workload: requests are *offered* at a fixed rate with Poisson arrivals (open loop: a slow answer
never delays the next request), 70 % ``POST /recall``, 20 % ``POST /context`` (4,096-token
window) and 10 % ``POST /sessions`` with 20 turns (LoCoMo text under new ids), each to a random
space; queries are LoCoMo question texts of that space's conversation (no evidence or answers
are sent). Every request has a client timeout (``--request-timeout``); every phase is bounded in
time and in count.

1. **Capacity**: steps of ``--step-seconds`` at rates ``--start-rate``, doubling while a step
   passes (p95 of all requests <= 1 s with timeouts counted at their timeout, and >= 99 % 2xx;
   halving down to ``--min-rate`` when even the first fails), then ``--refine`` bisection steps
   between the last pass and the first failure. The capacity is the highest passing rate.
2. **Overload**: ``--overload-factor`` (2) x the capacity for ``--duration`` seconds (300).
3. **Afterwards**: from the moment the overload stops, a probe round every 0.5 s
   (``/healthz``, a recall and a context call, 10 s timeout each); *full service* is the first
   round where all three answer 200.

Reported: offered and achieved throughput, errors by status, p50/p95/p99 per endpoint and
phase, the API's RSS (every second) and Neo4j's heap (``jcmd GC.heap_info`` every 5 s), the
``OutOfMemoryError`` lines in Neo4j's logs, and a plot of latency and status over time.
Results: ``benchmarks/results/<name>.{json,md}`` and ``<name>-timeline.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from benchmarks import campaign
from benchmarks.format import Conversation
from benchmarks.served import (
    ApiProcess,
    Neo4jProcess,
    Outcome,
    acall,
    call,
    percentile,
)

MIX = (("recall", 0.7), ("context", 0.2), ("ingest", 0.1))
CONTEXT_WINDOW = 4096
INGEST_TURNS = 20


def add_arguments(p: argparse.ArgumentParser) -> None:
    campaign.add_common(p, "load", neo4j_port=7699, api_port=8699)
    p.add_argument("--spaces", type=int, default=50, help="spaces, one LoCoMo conversation each")
    p.add_argument("--duration", type=float, default=300.0, help="overload phase, seconds")
    p.add_argument("--overload-factor", type=float, default=2.0)
    p.add_argument("--step-seconds", type=float, default=30.0, help="each capacity step")
    p.add_argument("--start-rate", type=float, default=0.5, help="first capacity step, req/s")
    p.add_argument("--max-rate", type=float, default=64.0, help="highest rate tried, req/s")
    p.add_argument("--min-rate", type=float, default=0.1, help="lowest rate tried, req/s")
    p.add_argument("--refine", type=int, default=2, help="bisection steps after doubling")
    p.add_argument(
        "--capacity", type=float, default=None, help="skip the search: use this capacity"
    )
    p.add_argument("--request-timeout", type=float, default=30.0, help="client timeout, s")
    p.add_argument(
        "--max-requests", type=int, default=50_000, help="upper bound on requests in a phase"
    )
    p.add_argument("--seed-workers", type=int, default=2, help="concurrent seeding clients")


# --------------------------------------------------------------------------- workload


@dataclass(frozen=True)
class Request:
    endpoint: str
    space: str
    path: str
    body: dict[str, Any]


@dataclass
class Record:
    phase: str
    endpoint: str
    sent: float  # seconds since the run started
    seconds: float
    status: int | str
    plain_5xx: bool


class Workload:
    """The mixed request stream (seeded): endpoint by weight, space uniform."""

    def __init__(self, conversations: Sequence[Conversation], n_spaces: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.spaces = [
            (space_id(i), conversations[i % len(conversations)]) for i in range(n_spaces)
        ]
        self.n = 0

    def next(self, phase: str) -> Request:
        self.n += 1
        endpoint = self.rng.choices([e for e, _ in MIX], weights=[w for _, w in MIX])[0]
        space, conv = self.spaces[self.rng.randrange(len(self.spaces))]
        if endpoint == "ingest":
            turns = [t for s in conv.sessions for t in s.turns]
            start = self.rng.randrange(max(1, len(turns) - INGEST_TURNS))
            sid = f"load-{phase}-{self.n}-{uuid.uuid4().hex[:6]}"
            chunk = [
                campaign.Line(t.role, t.speaker, t.content)
                for t in turns[start : start + INGEST_TURNS]
            ]
            return Request(
                endpoint,
                space,
                f"/v1/spaces/{space}/sessions",
                campaign.turns_body(sid, chunk, sid),
            )
        question = conv.questions[self.rng.randrange(len(conv.questions))].text
        if endpoint == "recall":
            return Request(endpoint, space, f"/v1/spaces/{space}/recall", {"query": question})
        body = {"query": question, "context_window": CONTEXT_WINDOW}
        return Request(endpoint, space, f"/v1/spaces/{space}/context", body)


def space_id(i: int) -> str:
    return f"load-{i:03d}"


# --------------------------------------------------------------------------- open loop


class Run:
    """The load generator: one asyncio loop, one HTTP/1.1 connection pool, open-loop arrivals."""

    def __init__(self, api: ApiProcess, workload: Workload, args: argparse.Namespace) -> None:
        self.api = api
        self.workload = workload
        self.args = args
        self.t0 = time.monotonic()
        self.records: list[Record] = []
        self.arrivals = random.Random(args.seed + 1)
        self.phases: list[dict[str, Any]] = []

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.api.base_url,
            timeout=httpx.Timeout(self.args.request_timeout),
            limits=httpx.Limits(max_connections=4000, max_keepalive_connections=256),
        )

    async def _one(self, client: httpx.AsyncClient, req: Request, phase: str) -> None:
        sent = time.monotonic() - self.t0
        try:
            out = await asyncio.wait_for(
                acall(client, "POST", req.path, req.body), self.args.request_timeout + 5
            )
        except TimeoutError:
            out = Outcome("timeout", self.args.request_timeout + 5)
        self.records.append(
            Record(phase, req.endpoint, sent, out.seconds, out.status, out.plain_5xx)
        )

    async def offer(
        self, client: httpx.AsyncClient, phase: str, rate: float, duration: float
    ) -> list[asyncio.Task[None]]:
        """Send at ``rate`` req/s (Poisson) for ``duration`` s; returns the in-flight tasks."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        start_s = time.monotonic() - self.t0
        due = start
        tasks: list[asyncio.Task[None]] = []
        while len(tasks) < self.args.max_requests:
            due += self.arrivals.expovariate(rate)
            if due - start >= duration:
                break
            await asyncio.sleep(max(0.0, due - loop.time()))
            req = self.workload.next(phase)
            tasks.append(asyncio.create_task(self._one(client, req, phase)))
        self.phases.append(
            {
                "phase": phase,
                "rate": rate,
                "start_s": round(start_s, 1),
                "duration_s": duration,
                "sent": len(tasks),
            }
        )
        return tasks

    async def step(self, client: httpx.AsyncClient, rate: float) -> dict[str, Any]:
        phase = f"step-{rate:g}"
        tasks = await self.offer(client, phase, rate, self.args.step_seconds)
        await asyncio.gather(*tasks)
        stats = phase_stats([r for r in self.records if r.phase == phase], self.args.step_seconds)
        stats["rate"] = rate
        stats["passed"] = passes(stats)
        print(
            f"  {rate:g} req/s: p95 {stats['p95_all_s']} s, 2xx {stats['ok_share']:.1%}, "
            f"achieved {stats['throughput_ok']:.2f}/s -> {'pass' if stats['passed'] else 'fail'}",
            flush=True,
        )
        await asyncio.sleep(5.0)  # let the server settle between steps
        return stats

    async def warm_up(self) -> dict[str, Any]:
        """One recall and one context call per space, in turn, before any step: the capacity
        is a warm server's (a space's first requests after a start load its caches). Their
        latencies are reported apart."""
        seconds: list[float] = []
        statuses: Counter[str] = Counter()
        async with self.client() as client:
            for space, conv in self.workload.spaces:
                q = conv.questions[0].text
                for path, body in (
                    ("recall", {"query": q}),
                    ("context", {"query": q, "context_window": CONTEXT_WINDOW}),
                ):
                    out = await acall(client, "POST", f"/v1/spaces/{space}/{path}", body)
                    seconds.append(out.seconds)
                    statuses[str(out.status)] += 1
        ordered = sorted(seconds)
        return {
            "requests": len(seconds),
            "statuses": dict(statuses),
            "p50_s": _r(ordered[len(ordered) // 2]) if ordered else None,
            "max_s": _r(ordered[-1]) if ordered else None,
        }

    async def capacity(self) -> tuple[float | None, list[dict[str, Any]]]:
        steps: list[dict[str, Any]] = []
        async with self.client() as client:
            rate, good, bad = self.args.start_rate, None, None
            while rate <= self.args.max_rate:
                s = await self.step(client, rate)
                steps.append(s)
                if not s["passed"]:
                    bad = rate
                    break
                good = rate
                rate *= 2
            while good is None and bad is not None and bad / 2 >= self.args.min_rate:
                s = await self.step(client, bad / 2)  # even the first rate failed: go down
                steps.append(s)
                good, bad = (bad / 2, bad) if s["passed"] else (None, bad / 2)
            for _ in range(self.args.refine if bad is not None and good is not None else 0):
                assert good is not None and bad is not None
                mid = round((good + bad) / 2, 2)
                s = await self.step(client, mid)
                steps.append(s)
                good, bad = (mid, bad) if s["passed"] else (good, mid)
        return good, steps

    async def overload(self, rate: float) -> dict[str, Any]:
        async with self.client() as client:
            tasks = await self.offer(client, "overload", rate, self.args.duration)
            ended = time.monotonic()
            full = await full_service(client, self.workload, cap=120.0)
            after = time.monotonic() - ended
            await asyncio.gather(*tasks)
        stats = phase_stats([r for r in self.records if r.phase == "overload"], self.args.duration)
        stats["rate"] = rate
        stats["full_service_after_s"] = None if full is None else round(full, 2)
        stats["probe_rounds_s"] = round(after, 1)
        return stats


async def full_service(client: httpx.AsyncClient, workload: Workload, cap: float) -> float | None:
    """Seconds until /healthz, a recall and a context call all answer 200 in one round."""
    t0 = time.monotonic()
    space, conv = workload.spaces[0]
    q = conv.questions[0].text
    while time.monotonic() - t0 < cap:
        calls = [
            _bounded(acall(client, "GET", "/healthz")),
            _bounded(acall(client, "POST", f"/v1/spaces/{space}/recall", {"query": q})),
            _bounded(
                acall(
                    client,
                    "POST",
                    f"/v1/spaces/{space}/context",
                    {"query": q, "context_window": CONTEXT_WINDOW},
                )
            ),
        ]
        outs = await asyncio.gather(*calls)
        if all(o.status == 200 for o in outs):
            return time.monotonic() - t0
        await asyncio.sleep(0.5)
    return None


async def _bounded(coro: Any, timeout: float = 10.0) -> Outcome:
    try:
        out: Outcome = await asyncio.wait_for(coro, timeout)
        return out
    except TimeoutError:
        return Outcome("timeout", timeout)


# --------------------------------------------------------------------------- statistics


def _r(x: float | None, d: int = 3) -> float | None:
    return None if x is None else round(x, d)


def phase_stats(records: list[Record], duration: float) -> dict[str, Any]:
    by_endpoint: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        by_endpoint[r.endpoint].append(r)
    ok = [r for r in records if isinstance(r.status, int) and 200 <= r.status < 300]
    return {
        "sent": len(records),
        "offered_rate": round(len(records) / duration, 2) if duration else None,
        "throughput_ok": round(len(ok) / duration, 2) if duration else 0.0,
        "ok_share": len(ok) / len(records) if records else 0.0,
        "statuses": dict(Counter(str(r.status) for r in records)),
        "plain_5xx": sum(r.plain_5xx for r in records),
        "p95_all_s": _r(percentile([r.seconds for r in records], 95)),
        "endpoints": {
            e: {
                "n": len(rs),
                "statuses": dict(Counter(str(r.status) for r in rs)),
                "p50_s": _r(percentile([r.seconds for r in rs], 50)),
                "p95_s": _r(percentile([r.seconds for r in rs], 95)),
                "p99_s": _r(percentile([r.seconds for r in rs], 99)),
            }
            for e, rs in sorted(by_endpoint.items())
        },
    }


def passes(stats: dict[str, Any]) -> bool:
    p95 = stats["p95_all_s"]
    return bool(stats["sent"]) and p95 is not None and p95 <= 1.0 and stats["ok_share"] >= 0.99


class Sampler:
    """API RSS every second, Neo4j heap every 5 s, in a thread beside the load."""

    def __init__(self, api: ApiProcess, neo: Neo4jProcess, t0: float) -> None:
        self.api, self.neo, self.t0 = api, neo, t0
        self.rss: list[tuple[float, float]] = []
        self.heap: list[tuple[float, float, float]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        i = 0
        while not self.stop.wait(1.0):
            now = round(time.monotonic() - self.t0, 1)
            rss = self.api.rss_mb()
            if rss is not None:
                self.rss.append((now, round(rss, 1)))
            if i % 5 == 0:
                heap = self.neo.heap_mb()
                if heap is not None:
                    self.heap.append(
                        (now, round(heap["used_mb"], 1), round(heap["committed_mb"], 1))
                    )
            i += 1


# --------------------------------------------------------------------------- seeding


def seed(api: ApiProcess, workload: Workload, workers: int, timeout: float) -> dict[str, Any]:
    """Create the spaces and post each one's conversation, session by session."""
    from tqdm import tqdm

    t0 = time.monotonic()
    statuses: Counter[str] = Counter()
    lock = threading.Lock()
    total = sum(len(c.sessions) for _, c in workload.spaces)
    bar = tqdm(total=total, desc="seeding", unit="session")

    def one(space: str, conv: Conversation) -> None:
        with httpx.Client(base_url=api.base_url, timeout=timeout) as client:
            got = call(client, "GET", f"/v1/spaces/{space}")
            if got.ok and (got.body.get("counts") or {}).get("memories"):
                bar.update(len(conv.sessions))
                return
            call(client, "POST", "/v1/spaces", {"id": space})
            for si, session in enumerate(conv.sessions):
                sid = f"seed-s{si}"
                out = call(
                    client,
                    "POST",
                    f"/v1/spaces/{space}/sessions",
                    campaign.session_body(session, sid, f"{space}-{sid}"),
                )
                with lock:
                    statuses[str(out.status)] += 1
                bar.update(1)

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda sc: one(*sc), workload.spaces))
    bar.close()
    return {"seconds": round(time.monotonic() - t0, 1), "statuses": dict(statuses)}


# --------------------------------------------------------------------------- report


def plot(result: dict[str, Any], records: list[Record], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
    colours = {"recall": "tab:blue", "context": "tab:orange", "ingest": "tab:green"}
    for e, c in colours.items():
        rs = [r for r in records if r.endpoint == e]
        ax1.scatter([r.sent for r in rs], [r.seconds for r in rs], s=3, c=c, label=e, alpha=0.5)
    ax1.set_yscale("log")
    ax1.set_ylabel("latency (s, log)")
    ax1.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax1.legend(fontsize=8, loc="upper left")
    for ph in result["phases"]:
        ax1.axvspan(ph["start_s"], ph["start_s"] + ph["duration_s"], alpha=0.06, color="k")
        ax1.text(ph["start_s"], ax1.get_ylim()[1], f"{ph['rate']:g}/s", fontsize=6, va="top")
    classes = ("2xx", "429", "503", "4xx", "5xx", "timeout", "conn_error")
    cls_colour = ("tab:green", "gold", "tab:purple", "tab:grey", "tab:red", "k", "tab:brown")
    width = 5.0
    bins: dict[str, Counter[int]] = {c: Counter() for c in classes}
    for r in records:
        bins[status_class(r.status)][int(r.sent // width)] += 1
    keys = sorted({k for c in bins.values() for k in c})
    bottom = [0.0] * len(keys)
    for c, colour in zip(classes, cls_colour, strict=True):
        vals = [bins[c][k] / width for k in keys]
        ax2.bar([k * width for k in keys], vals, width, bottom=bottom, color=colour, label=c)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax2.set_ylabel("requests/s by status (sent time)")
    ax2.set_xlabel("seconds since the load started")
    ax2.legend(fontsize=7, ncol=len(classes), loc="upper left")
    fig.suptitle(f"{result['name']}: latency and status over time", fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def status_class(status: int | str) -> str:
    if isinstance(status, str):
        return "timeout" if status == "timeout" else "conn_error"
    if 200 <= status < 300:
        return "2xx"
    if status in (429, 503):
        return str(status)
    return "5xx" if status >= 500 else "4xx"


def markdown(result: dict[str, Any], image: Path | None) -> str:
    s = result["summary"]
    out = [f"# Benchmark `{result['name']}` (open-loop mixed load)", ""]
    out += campaign.header_lines(result)
    out += [
        f"- {result['config']['spaces']} spaces (one LoCoMo conversation each; seeding "
        f"{result['seeding']}); mix 70 % recall / 20 % context ({CONTEXT_WINDOW} tokens) / 10 % "
        f"{INGEST_TURNS}-turn ingests; client timeout {result['config']['request_timeout']} s",
        f"- warm-up before the steps (a recall and a context call per space, in turn, not "
        f"counted): {result.get('warm_up')}",
        "",
        *campaign.bars_table(s["bars"]),
    ]
    out += [
        "",
        "## Capacity search",
        "",
        "| offered req/s | sent | 2xx/s | p95 s | statuses | pass |",
    ]
    out += ["|---|---|---|---|---|---|"]
    for st in result["steps"]:
        out.append(
            f"| {st['rate']:g} | {st['sent']} | {st['throughput_ok']} | {st['p95_all_s']} "
            f"| {st['statuses']} | {'yes' if st['passed'] else 'no'} |"
        )
    out += ["", f"**Capacity: {s['capacity']} req/s** (p95 <= 1 s, >= 99 % 2xx).", ""]
    ov = result.get("overload")
    if ov:
        out += [
            f"## Overload: {ov['rate']:g} req/s offered for {result['config']['duration']} s",
            "",
            f"- sent {ov['sent']}, achieved {ov['throughput_ok']} 2xx/s; statuses "
            f"{ov['statuses']}; plain-text 5xx {ov['plain_5xx']}",
            f"- full service after the overload: {ov['full_service_after_s']} s",
            f"- API RSS max {s['api_rss_max_mb']} MB; Neo4j heap used max {s['heap_used_max_mb']} "
            f"MB of {s['heap_committed_max_mb']} MB committed (-Xmx {result['neo4j']['heap']}); "
            f"OutOfMemoryError lines in Neo4j's logs: {s['neo4j_oom_lines']}",
            "",
            "| endpoint | n | p50 s | p95 s | p99 s | statuses |",
            "|---|---|---|---|---|---|",
        ]
        for e, st in ov["endpoints"].items():
            out.append(
                f"| {e} | {st['n']} | {st['p50_s']} | {st['p95_s']} | {st['p99_s']} "
                f"| {st['statuses']} |"
            )
    if image is not None:
        out += ["", f"![latency and status over time]({image.name})"]
    return "\n".join(out) + "\n"


def main(args: argparse.Namespace) -> int:
    workload = Workload(campaign.locomo_dataset().conversations, args.spaces, args.seed)
    with campaign.served(args, "load") as srv:
        seeding = seed(srv.api, workload, args.seed_workers, 300.0)
        run = Run(srv.api, workload, args)
        sampler = Sampler(srv.api, srv.neo, run.t0)
        sampler.thread.start()
        steps: list[dict[str, Any]] = []
        warm_up = asyncio.run(run.warm_up())
        print(f"load: warm-up {warm_up}", flush=True)
        capacity = args.capacity
        if capacity is None:
            print("load: capacity search …", flush=True)
            capacity, steps = asyncio.run(run.capacity())
        rate = args.overload_factor * (capacity or args.start_rate)
        print(f"load: capacity {capacity} req/s; offering {rate:g} req/s …", flush=True)
        overload = asyncio.run(run.overload(rate))
        sampler.stop.set()
        sampler.thread.join()
        oom = srv.neo.out_of_memory_errors()
    full = overload["full_service_after_s"]
    result = campaign.finish(
        args,
        srv,
        "load",
        {
            "seeding": seeding,
            "warm_up": warm_up,
            "steps": steps,
            "overload": overload,
            "phases": run.phases,
            "samples": {"api_rss_mb": sampler.rss, "neo4j_heap_mb": sampler.heap},
            "summary": {
                "capacity": capacity,
                "overload_rate": rate,
                "api_rss_max_mb": max((x[1] for x in sampler.rss), default=None),
                "heap_used_max_mb": max((h[1] for h in sampler.heap), default=None),
                "heap_committed_max_mb": max((h[2] for h in sampler.heap), default=None),
                "neo4j_oom_lines": oom,
                "bars": {
                    "only 2xx, 429 or 503 under twice the capacity": set(overload["statuses"])
                    <= {"200", "201", "429", "503"},
                    "Neo4j heap never exhausted (no OutOfMemoryError)": oom == 0,
                    "full service within 10 s afterwards": full is not None and full <= 10.0,
                },
            },
            "records": [vars(r) for r in run.records],
        },
    )
    args.out_dir.mkdir(parents=True, exist_ok=True)
    image = plot(result, run.records, args.out_dir / f"{args.name}-timeline.png")
    files = campaign.write(result, markdown(result, image), args.out_dir)
    print(f"wrote {files['json']}, {files['md']} and {image}")
    print(result["summary"])
    return 0
