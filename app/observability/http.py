"""Wiring observability into the app: the middleware, ``/metrics``, and the metered
services once they exist."""

from __future__ import annotations

from fastapi import Depends, FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.auth import require_key_for_health
from app.observability.instrument import JobRunCollector, instrument
from app.observability.metrics import Metrics
from app.observability.middleware import RequestMiddleware
from app.services import Services
from pipelines.graph import GraphStore


def install(app: FastAPI) -> Metrics:
    metrics = Metrics()
    app.state.metrics = metrics

    def store() -> GraphStore | None:
        services = app.state.services
        return services.engine.store if isinstance(services, Services) else None

    metrics.registry.register(JobRunCollector(store))
    app.add_middleware(RequestMiddleware, metrics=metrics)

    @app.get("/metrics", include_in_schema=False, dependencies=[Depends(require_key_for_health)])
    def prometheus(_: Request) -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return metrics


def meter(app: FastAPI, services: Services) -> None:
    """Called once the services are built (the lifespan)."""
    instrument(services, app.state.metrics)
