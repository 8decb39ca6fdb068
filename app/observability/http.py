"""Wiring observability into the app: the middleware, ``/metrics`` (optionally behind an API
key), the scrape-time collectors, optional traces, and the metered (and traced) services once
they exist."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.auth import require_key, require_key_for_health
from app.observability.background import BackgroundCollector
from app.observability.collectors import GdsCollector, JobRunCollector, PoolCollector
from app.observability.instrument import instrument
from app.observability.metrics import Metrics
from app.observability.middleware import RequestMiddleware
from app.observability.tracing import TracingMiddleware, trace_services, tracer_for
from app.services import Services
from app.settings import Settings
from pipelines.engine import Engine
from pipelines.graph import GraphStore


def require_metrics_key(request: Request) -> None:
    """With ``MNEMOGRAPH_METRICS_REQUIRES_KEY`` and keys configured, ``/metrics`` answers only
    a key limited to no space: the figures are the whole server's."""
    settings: Settings = request.app.state.settings
    if not settings.metrics_requires_key:
        return
    require_key(request)
    key = request.state.api_key
    if key is not None and key.spaces is not None:
        raise HTTPException(403, "metrics are the whole server's; this API key is limited")


def _engine(app: FastAPI) -> Engine | None:
    services = getattr(app.state, "services", None)
    return services.engine if isinstance(services, Services) else None


def install(app: FastAPI, tracer_provider: Any | None = None) -> Metrics:
    """``tracer_provider``: where spans go when ``MNEMOGRAPH_OTEL`` is on (default:
    OpenTelemetry's global provider)."""
    metrics = Metrics()
    app.state.metrics = metrics
    settings: Settings = app.state.settings
    app.state.tracer = tracer_for(tracer_provider) if settings.otel else None

    def store() -> GraphStore | None:
        services = getattr(app.state, "services", None)
        return services.engine.store if isinstance(services, Services) else None

    for collector in (JobRunCollector(store), GdsCollector(store), PoolCollector(store)):
        metrics.registry.register(collector)
    metrics.registry.register(BackgroundCollector(lambda: _engine(app)))
    if app.state.tracer is not None:
        # inside the request id
        app.add_middleware(TracingMiddleware, tracer=app.state.tracer.tracer)
    app.add_middleware(RequestMiddleware, metrics=metrics)

    @app.get("/metrics", include_in_schema=False, dependencies=[Depends(require_key_for_health)])
    def prometheus(request: Request) -> Response:
        require_metrics_key(request)
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return metrics


def meter(app: FastAPI, services: Services) -> None:
    """Called once the services are built (the lifespan)."""
    instrument(services, app.state.metrics)
    if app.state.tracer is not None:
        trace_services(services, app.state.tracer.tracer)


def unmeter(app: FastAPI) -> None:
    """Called when the app stops: pipelines' spans off, the app's own exporter flushed."""
    if app.state.tracer is not None:
        app.state.tracer.shutdown()
