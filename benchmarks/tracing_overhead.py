"""What tracing costs a ``/context`` call: the same calls on one space, through the real app,
with ``MNEMOGRAPH_OTEL`` off and on (spans batched to an exporter that drops them, so the
figure is the SDK's work, not a collector's), in alternating rounds.

    python -m benchmarks.tracing_overhead --neo4j-uri bolt://127.0.0.1:7799 --calls 40

Prints p50/p95 per setting, the process's CPU time per call in each round, the spans one call
records, and the ratio of the medians."""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from collections.abc import Sequence
from typing import Any

from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from pipelines.engine import Engine, EngineSettings
from pipelines.graph import GraphConfig

TURNS = [
    "I am planning a trip to Lisbon in May with my sister Clara.",
    "The Orion migration cutover is planned for the second week of June.",
    "We moved the build server from Frankfurt to Oslo last winter.",
    "Clara prefers the small hotels in Alfama; the Memmo is her favourite.",
    "The Orion team meets on Tuesdays; Priya runs the database part.",
    "My garden needs new tomato plants before the end of April.",
]
QUERIES = ["When is the Orion cutover?", "Where is the build server?", "Which hotel for Clara?"]


def _provider() -> tuple[Any, list[int]]:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    counted = [0]

    class Dropping(SpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            counted[0] += len(spans)
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropping()))
    return provider, counted


def _times(
    client: TestClient, space: str, calls: int, cpu: list[float] | None = None
) -> list[float]:
    """Wall milliseconds per call; ``cpu`` gets the process's CPU milliseconds per call (all
    its threads: less disturbed by other processes than wall time on a shared machine)."""
    out = []
    c0 = time.process_time()
    for i in range(calls):
        body = {"query": QUERIES[i % len(QUERIES)], "context_window": 2000}
        t0 = time.perf_counter()
        r = client.post(f"/v1/spaces/{space}/context", json=body)
        out.append((time.perf_counter() - t0) * 1000.0)
        assert r.status_code == 200, r.text
    if cpu is not None:
        cpu.append((time.process_time() - c0) * 1000.0 / calls)
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--neo4j-uri", default="bolt://127.0.0.1:7687")
    p.add_argument("--calls", type=int, default=40, help="calls per setting and round")
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args(argv)
    engine = Engine.start(EngineSettings(graph=GraphConfig(uri=args.neo4j_uri)))
    space = f"bench-otel-{uuid.uuid4().hex[:8]}"
    provider, counted = _provider()

    def off_app() -> Any:  # an app starts once (its MCP session manager): one per round
        return create_app(Settings(neo4j_uri=args.neo4j_uri), engine=engine)

    def on_app() -> Any:
        settings = Settings(otel=True, neo4j_uri=args.neo4j_uri)
        return create_app(settings, engine=engine, tracer_provider=provider)

    timings: dict[str, list[float]] = {"off": [], "on": []}
    cpu: dict[str, list[float]] = {"off": [], "on": []}
    try:
        with TestClient(off_app()) as setup:
            assert setup.post("/v1/spaces", json={"id": space}).status_code == 201
            turns = [{"role": "user", "speaker": "Ana", "content": t} for t in TURNS]
            body = {"session_id": "s1", "turns": turns}
            assert setup.post(f"/v1/spaces/{space}/sessions", json=body).status_code == 201
            _times(setup, space, 5)  # warm: models, plans, caches
        for _ in range(args.rounds):
            with TestClient(off_app()) as client:
                timings["off"] += _times(client, space, args.calls, cpu["off"])
            with TestClient(on_app()) as client:
                before = counted[0]
                timings["on"] += _times(client, space, args.calls, cpu["on"])
            provider.force_flush()
            spans_per_call = (counted[0] - before) / args.calls
    finally:
        with TestClient(off_app()) as cleanup:
            cleanup.delete(f"/v1/spaces/{space}")
        provider.shutdown()
        engine.close()
    for name, values in timings.items():
        print(
            f"tracing {name}: {len(values)} calls, p50 {statistics.median(values):.1f} ms, "
            f"p95 {_pct(values, 0.95):.1f} ms; CPU per call by round "
            + ", ".join(f"{c:.1f}" for c in cpu[name])
            + " ms"
        )
    ratio = statistics.median(timings["on"]) / statistics.median(timings["off"])
    print(f"spans per call (on): {spans_per_call:.0f}; median on / off: {ratio:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
