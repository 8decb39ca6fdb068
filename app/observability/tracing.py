"""Optional OpenTelemetry traces (``MNEMOGRAPH_OTEL=1`` with the ``otel`` extra installed):
a server span per HTTP request (named by its route template), under it the spans the
pipelines make (:mod:`pipelines.tracing`): context assembly and each of its steps, each recall
(``api`` or ``assembler``) and each recall step, every Neo4j statement (named by its
``.cypher`` file), and one span per job run. Off, nothing here is installed or imported.

Where spans go: the tracer provider given to :func:`install`; else, when the standard
``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set, a provider
of the app's own exporting to it by OTLP/HTTP (batched, bounded queue, flushed at shutdown);
else OpenTelemetry's global one (no-op unless the process configured an SDK): nothing is
exported unless asked for."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.observability.middleware import request_id, route_of
from app.services import Services
from pipelines import tracing
from pipelines.recall.service import Recaller

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

log = logging.getLogger("mnemograph.tracing")

TRACER_NAME = "mnemograph"
ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


@dataclass(frozen=True)
class Tracing:
    """The app's tracer, and the provider it made itself (shut down with the app), if any."""

    tracer: Tracer
    owned: Any | None = None

    def shutdown(self) -> None:
        tracing.disable()
        if self.owned is not None:
            self.owned.shutdown()  # exports what is still queued


def otlp_provider() -> Any | None:
    """A tracer provider exporting by OTLP/HTTP when an OTLP endpoint is configured (the
    exporter reads the standard ``OTEL_EXPORTER_OTLP_*`` variables itself), else None."""
    if not any(os.environ.get(v) for v in ENDPOINT_VARS):
        return None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # service.name from OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES when set, else ours
    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource.create({"service.name": TRACER_NAME}))
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def tracer_for(provider: Any | None) -> Tracing | None:
    """The app's tracing, or None (logged) when OpenTelemetry is not installed."""
    try:
        from opentelemetry import trace
    except ImportError:
        log.warning("MNEMOGRAPH_OTEL is on but opentelemetry is not installed (the otel extra)")
        return None
    owned = None
    if provider is None:
        try:
            owned = provider = otlp_provider()
        except ImportError:
            log.warning("an OTLP endpoint is set but the OTLP exporter is not installed")
    return Tracing(trace.get_tracer(TRACER_NAME, tracer_provider=provider), owned)


class TracingMiddleware:
    """A server span around each HTTP request, current while the request is served (so the
    recall spans of its handler are its children)."""

    def __init__(self, app: ASGIApp, tracer: Tracer) -> None:
        self.app = app
        self.tracer = tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from opentelemetry.trace import SpanKind, Status, StatusCode

        method = str(scope["method"])
        with self.tracer.start_as_current_span(method, kind=SpanKind.SERVER) as span:
            status = 500

            async def send_status(message: Message) -> None:
                nonlocal status
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                await send(message)

            try:
                await self.app(scope, receive, send_status)
            finally:
                route = route_of(scope)
                span.update_name(f"{method} {route}")
                span.set_attribute("http.request.method", method)
                span.set_attribute("http.route", route)
                span.set_attribute("http.response.status_code", status)
                rid = request_id.get()
                if rid is not None:
                    span.set_attribute("mnemograph.request_id", rid)
                if status >= 500:
                    span.set_status(Status(StatusCode.ERROR))


class TracedRecaller:
    """A recall span (``recall``, attribute ``mnemograph.caller``), current while the inner
    recaller runs (its steps and statements are its children); everything else passes
    through."""

    def __init__(self, inner: Any, tracer: Tracer, caller: str) -> None:
        self._inner = inner
        self._tracer = tracer
        self._caller = caller

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def recall(self, *args: Any, **kwargs: Any) -> Any:
        with self._tracer.start_as_current_span("recall") as span:
            span.set_attribute("mnemograph.caller", self._caller)
            response = self._inner.recall(*args, **kwargs)
            span.set_attribute("mnemograph.results", len(response.results))
        return response


def _unwrapped(recaller: Any) -> Any:
    """The recaller under its metering (or other) proxies."""
    while (inner := getattr(recaller, "_inner", None)) is not None:
        recaller = inner
    return recaller


def trace_services(services: Services, tracer: Tracer) -> None:
    """Trace the pipelines (statements, steps, jobs), the recalls of the API and those the
    assembler makes, with the read path's executors carrying the current span to their
    tasks."""
    tracing.enable(tracer)
    assembler = services.assembler
    assembler.read_ahead = tracing.propagating(assembler.read_ahead)
    for proxy in (services.recaller, assembler.recaller):
        recaller = _unwrapped(proxy)
        if recaller.executor is not None:
            recaller.executor = tracing.propagating(recaller.executor)
    services.recaller = cast(Recaller, TracedRecaller(services.recaller, tracer, "api"))
    assembler.recaller = cast(Recaller, TracedRecaller(assembler.recaller, tracer, "assembler"))
