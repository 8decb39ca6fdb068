"""OpenTelemetry traces (MNEMOGRAPH_OTEL): off by default, adding nothing to the app; on, a
server span per request, under it context assembly and each of its steps, each recall (the
API's and the assembler's) and recall step, every Neo4j statement (named by its file, also
from the read path's executor threads), and a span per job run, collected by the SDK's
in-memory exporter from a real app on a real Neo4j; and exported by OTLP/HTTP to a real
HTTP receiver when OTEL_EXPORTER_OTLP_ENDPOINT is set."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from fastapi.testclient import TestClient
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import cypher
from app.main import create_app
from app.observability.tracing import TracedRecaller, TracingMiddleware
from app.settings import Settings
from tests.integration.test_context_assembly import DENSE_ENOUGH, _ingest


def test_tracing_is_off_by_default_and_adds_nothing(engine):
    app = create_app(Settings(neo4j_uri=engine.store.config.uri), engine=engine)
    assert app.state.tracer is None
    assert all(m.cls is not TracingMiddleware for m in app.user_middleware)
    with TestClient(app):
        services = app.state.services
        assert not isinstance(services.recaller, TracedRecaller)
        assert not isinstance(services.assembler.recaller, TracedRecaller)


def _parent(span: ReadableSpan, spans: list[ReadableSpan]) -> ReadableSpan | None:
    if span.parent is None:
        return None
    return next((s for s in spans if s.context.span_id == span.parent.span_id), None)


def _root(span: ReadableSpan, spans: list[ReadableSpan]) -> ReadableSpan:
    while (up := _parent(span, spans)) is not None:
        span = up
    return span


def test_spans_per_request_recall_and_recall_step(engine):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = Settings(otel=True, neo4j_uri=engine.store.config.uri)
    space = f"otel-{uuid.uuid4().hex[:8]}"
    with TestClient(create_app(settings, engine=engine, tracer_provider=provider)) as c:
        assert c.post("/v1/spaces", json={"id": space}).status_code == 201
        try:
            turn = {"role": "user", "speaker": "Ana", "content": "The build server is in Oslo."}
            body = {"session_id": "s1", "turns": [turn]}
            assert c.post(f"/v1/spaces/{space}/sessions", json=body).status_code == 201
            r = c.post(f"/v1/spaces/{space}/recall", json={"query": "Where is the build server?"},
                       headers={"X-Request-ID": "trace-me"})  # fmt: skip
            assert r.status_code == 200
            exporter.clear()
            ctx = {"query": "Where is the build server?", "context_window": 2000}
            assert c.post(f"/v1/spaces/{space}/context", json=ctx).status_code == 200
            context_spans = list(exporter.get_finished_spans())
        finally:
            c.delete(f"/v1/spaces/{space}")
    # the recall request: its server span, a recall span under it, step spans under that
    server = [s for s in context_spans if s.name == "POST /v1/spaces/{space}/context"]
    assert len(server) == 1 and server[0].attributes["http.response.status_code"] == 200
    recalls = [s for s in context_spans if s.name == "recall"]
    assert recalls and all(s.attributes["mnemograph.caller"] == "assembler" for s in recalls)
    steps = [s for s in context_spans if s.name.startswith("recall.")]
    assert {"recall.understand", "recall.candidates", "recall.fuse"} <= {s.name for s in steps}
    for step in steps:
        parent = _parent(step, context_spans)
        assert parent is not None and parent.name == "recall"
        assert parent.start_time <= step.start_time <= step.end_time <= parent.end_time
    assert all(_root(s, context_spans) is server[0] for s in recalls)


def test_the_api_recall_span_is_a_child_of_its_request(engine):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = Settings(otel=True, neo4j_uri=engine.store.config.uri)
    space = f"otel-{uuid.uuid4().hex[:8]}"
    with TestClient(create_app(settings, engine=engine, tracer_provider=provider)) as c:
        assert c.post("/v1/spaces", json={"id": space}).status_code == 201
        try:
            r = c.post(f"/v1/spaces/{space}/recall", json={"query": "anything"},
                       headers={"X-Request-ID": "trace-me"})  # fmt: skip
            assert r.status_code == 200
            missing = c.post(f"/v1/spaces/{space}/recall", json={})
            assert missing.status_code == 422
        finally:
            c.delete(f"/v1/spaces/{space}")
    spans = list(exporter.get_finished_spans())
    server = [s for s in spans if s.name == "POST /v1/spaces/{space}/recall"]
    assert len(server) == 2
    ok = next(s for s in server if s.attributes["http.response.status_code"] == 200)
    assert ok.attributes["mnemograph.request_id"] == "trace-me"
    assert ok.attributes["http.route"] == "/v1/spaces/{space}/recall"
    assert space not in ok.name  # named by the route template, never the path
    recall = next(s for s in spans if s.name == "recall")
    assert recall.attributes["mnemograph.caller"] == "api"
    assert _parent(recall, spans) is ok


def _statements(spans: list[ReadableSpan]) -> list[ReadableSpan]:
    return [s for s in spans if (s.attributes or {}).get("db.system") == "neo4j"]


def test_a_context_call_traces_its_steps_and_statements_under_the_request(engine):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = Settings(otel=True, neo4j_uri=engine.store.config.uri)
    space = f"otel-{uuid.uuid4().hex[:8]}"
    secret = "Zanzibar-7731"  # a value of the request: it must reach no span
    with TestClient(create_app(settings, engine=engine, tracer_provider=provider)) as c:
        assert c.post("/v1/spaces", json={"id": space}).status_code == 201
        try:
            turn = {"role": "user", "speaker": "Ana", "content": "The build server is in Oslo."}
            body = {"session_id": "s1", "turns": [turn]}
            assert c.post(f"/v1/spaces/{space}/sessions", json=body).status_code == 201
            exporter.clear()
            ctx = {"query": f"Where is the build server {secret}?", "context_window": 2000}
            r = c.post(f"/v1/spaces/{space}/context", json=ctx)
            assert r.status_code == 200
            spans = list(exporter.get_finished_spans())
            exporter.clear()
            job = c.post(f"/v1/spaces/{space}/jobs/decay", json={})
            assert job.status_code == 200
            job_spans = list(exporter.get_finished_spans())
        finally:
            c.delete(f"/v1/spaces/{space}")
    (server,) = [s for s in spans if s.name == "POST /v1/spaces/{space}/context"]
    # the request's own trace (a schema the call queued is built by the refresher: its own)
    spans = [s for s in spans if s.context.trace_id == server.context.trace_id]
    (assemble,) = [s for s in spans if s.name == "assemble"]
    assert _parent(assemble, spans) is server
    # every step the report times is a span under the assembly, in the report's order
    timed = [k for k in r.json()["report"]["timings_ms"] if k != "total"]
    steps = sorted((s for s in spans if s.name.startswith("assemble.")), key=lambda s: s.start_time)
    assert [s.name for s in steps][: len(timed)] == [f"assemble.{k}" for k in timed]
    assert all(_parent(s, spans) is assemble for s in steps)
    # every statement is a span named by its .cypher file, under the request
    statements = _statements(spans)
    names = {s.name for s in statements}
    assert {"spaces/get", "recall/candidates"} <= names
    for span in statements:
        assert cypher.load(span.name)  # the name is a statement file
        attributes = dict(span.attributes or {})
        assert attributes["db.operation"].isupper() and attributes["db.namespace"] == "neo4j"
        assert _root(span, spans) is server  # executor threads included
        parent = _parent(span, spans)
        assert parent is not None and parent is not server  # under a step, not loose
    step_of = {_parent(s, spans).name for s in statements}  # type: ignore[union-attr]
    assert any(name.startswith("recall.") for name in step_of)
    assert any(name.startswith("assemble.") for name in step_of)
    values = [str(v) for s in spans for v in (s.attributes or {}).values()]
    assert not any(secret in v for v in values)

    (run_span,) = [s for s in job_spans if s.name == "job decay"]
    run = job.json()
    assert dict(run_span.attributes or {}) == {
        "mnemograph.job": "decay",
        "mnemograph.space": space,
        "mnemograph.run_id": run["id"],
        "mnemograph.outcome": run["status"],
    }
    under = {s.name for s in _statements(job_spans) if _parent(s, job_spans) is run_span}
    assert {"consolidate/jobrun_start", "consolidate/jobrun_finish"} <= under


def test_a_staged_context_call_traces_its_phases_and_the_walk(engine):
    """Staged mode: Phases 1-3 and Phase 2's PageRank are spans, with the walk's statements
    (some read ahead on the assembler's executor) under the phase that sent them."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = Settings(otel=True, neo4j_uri=engine.store.config.uri)
    space = f"otel-{uuid.uuid4().hex[:8]}"
    with TestClient(create_app(settings, engine=engine, tracer_provider=provider)) as c:
        body = {"id": space, "settings": {"assembly": DENSE_ENOUGH}}
        assert c.post("/v1/spaces", json=body).status_code == 201
        try:
            _ingest(c, space)
            exporter.clear()
            ctx = {"query": "When is the Orion cutover planned?", "context_window": 3000,
                   "stage": "orion"}  # fmt: skip
            r = c.post(f"/v1/spaces/{space}/context", json=ctx)
            assert r.status_code == 200 and r.json()["report"]["mode"] == "staged"
            spans = list(exporter.get_finished_spans())
        finally:
            c.delete(f"/v1/spaces/{space}")
    timed = [k for k in r.json()["report"]["timings_ms"] if k != "total"]
    assert {"own_stage", "related_pagerank", "related", "summaries"} <= set(timed)
    (assemble,) = [s for s in spans if s.name == "assemble"]
    steps = {s.name: s for s in spans if _parent(s, spans) is assemble}
    assert {f"assemble.{k}" for k in timed} <= set(steps)
    walk = [
        s for s in _statements(spans) if _parent(s, spans) is steps["assemble.related_pagerank"]
    ]
    assert walk, "the PageRank step runs statements"
    (server,) = [s for s in spans if s.name == "POST /v1/spaces/{space}/context"]
    assert all(_root(s, spans) is server for s in _statements(spans))


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver: keeps the body of every export."""

    bodies: list[bytes]

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        type(self).bodies.append(self.rfile.read(length))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def otlp_receiver() -> Iterator[tuple[str, list[bytes]]]:
    handler = type("Receiver", (_Receiver,), {"bodies": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler.bodies
    server.shutdown()
    server.server_close()


def test_spans_are_exported_by_otlp_when_an_endpoint_is_set(
    engine, otlp_receiver, monkeypatch: pytest.MonkeyPatch
):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    endpoint, bodies = otlp_receiver
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    settings = Settings(otel=True, neo4j_uri=engine.store.config.uri)
    app = create_app(settings, engine=engine)
    assert app.state.tracer.owned is not None  # the app's own OTLP provider
    with TestClient(app) as c:
        assert c.get("/v1/spaces/no-such-space-otlp").status_code == 404
    # stopping the app flushed the batch to the receiver
    names, services = set(), set()
    for body in bodies:
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            for attr in resource_spans.resource.attributes:
                if attr.key == "service.name":
                    services.add(attr.value.string_value)
            for scope_spans in resource_spans.scope_spans:
                names |= {span.name for span in scope_spans.spans}
    assert "GET /v1/spaces/{space}" in names and "spaces/get" in names
    assert services == {"mnemograph"}


def test_nothing_is_exported_without_an_endpoint(engine, monkeypatch: pytest.MonkeyPatch):
    for var in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    app = create_app(Settings(otel=True, neo4j_uri=engine.store.config.uri), engine=engine)
    assert app.state.tracer is not None and app.state.tracer.owned is None


def test_a_leases_renewals_nest_under_the_span_that_started_its_heartbeat(engine, space):
    import time

    from pipelines import tracing
    from pipelines.consolidate.lease import acquire_lease

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.enable(provider.get_tracer("test"))
    try:
        with tracing.span("job decay") as job:
            lease = acquire_lease(engine.store, space, "decay", ttl_seconds=30.0)
            assert lease is not None
            lease.start_heartbeat(0.05)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not any(
                s.name == "consolidate/lease_renew" for s in exporter.get_finished_spans()
            ):
                time.sleep(0.05)
            lease.release()
    finally:
        tracing.disable()
    spans = list(exporter.get_finished_spans())
    renewals = [s for s in spans if s.name == "consolidate/lease_renew"]
    assert renewals
    assert all(s.parent is not None and s.parent.span_id == job.context.span_id for s in renewals)
