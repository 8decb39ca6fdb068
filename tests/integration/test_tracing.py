"""OpenTelemetry traces (MNEMOGRAPH_OTEL): off by default, adding nothing to the app; on, a
server span per request, a recall span per recall (the API's and the assembler's) and a span
per recall step, collected by the SDK's in-memory exporter from a real app on a real Neo4j."""

from __future__ import annotations

import uuid

from fastapi.testclient import TestClient
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from app.main import create_app
from app.observability.tracing import TracedRecaller, TracingMiddleware
from app.settings import Settings


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
