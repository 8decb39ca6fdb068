"""Optional OpenTelemetry traces (``MNEMOGRAPH_OTEL=1`` with the ``otel`` extra installed):
a server span per HTTP request (named by its route template), a span per recall (``api`` or
``assembler``) and one child span per recall step. Off, nothing here is installed or imported.

Spans go to the tracer provider given to :func:`install` or, by default, OpenTelemetry's global
one: without an SDK configured they are no-ops, so no exporter is required. The step spans are
laid out from the recall's own step clock (``timings_ms``: each step's duration, in order), so
the read path carries no tracing code."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, cast

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.observability.middleware import request_id, route_of
from app.services import Services
from pipelines.recall.service import Recaller

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer, TracerProvider

log = logging.getLogger("mnemograph.tracing")

TRACER_NAME = "mnemograph"


def tracer_for(provider: TracerProvider | None) -> Tracer | None:
    """The tracer spans are made with, or None (logged) when OpenTelemetry is not installed."""
    try:
        from opentelemetry import trace
    except ImportError:
        log.warning("MNEMOGRAPH_OTEL is on but opentelemetry is not installed (the otel extra)")
        return None
    return trace.get_tracer(TRACER_NAME, tracer_provider=provider)


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
    """A recall span (``recall``, attribute ``mnemograph.caller``) with a child span per step,
    around an inner recaller; everything else passes through."""

    def __init__(self, inner: Any, tracer: Tracer, caller: str) -> None:
        self._inner = inner
        self._tracer = tracer
        self._caller = caller

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def recall(self, *args: Any, **kwargs: Any) -> Any:
        start = time.time_ns()
        with self._tracer.start_as_current_span(
            "recall", start_time=start, end_on_exit=False
        ) as span:
            span.set_attribute("mnemograph.caller", self._caller)
            try:
                response = self._inner.recall(*args, **kwargs)
            except BaseException:
                span.end()
                raise
            at = start
            for step, ms in response.timings_ms.items():
                if step == "total":
                    continue
                end = at + int(ms * 1_000_000)
                self._tracer.start_span(f"recall.{step}", start_time=at).end(end_time=end)
                at = end
            span.set_attribute("mnemograph.results", len(response.results))
            span.end()
        return response


def trace_services(services: Services, tracer: Tracer) -> None:
    """Trace the recalls of the API and those the assembler makes."""
    services.recaller = cast(Recaller, TracedRecaller(services.recaller, tracer, "api"))
    assembler = services.assembler
    assembler.recaller = cast(Recaller, TracedRecaller(assembler.recaller, tracer, "assembler"))
