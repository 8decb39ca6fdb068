"""FastAPI app factory."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI
from fastapi_offline import FastAPIOffline

from app import errors, openapi
from app.admission import Admission
from app.auth import require_key
from app.mcp import http as mcp_http
from app.observability import http as observability
from app.routers import (
    browser,
    context,
    graph,
    health,
    jobs,
    limits,
    memories,
    recall,
    spaces,
    transfer,
)
from app.services import build_services
from app.settings import Settings
from pipelines.engine import Engine

log = logging.getLogger("mnemograph.app")

V1_ROUTERS = [
    spaces.router,
    memories.router,
    graph.router,
    context.router,
    jobs.router,
    recall.router,
    transfer.router,
    limits.router,
]


def create_app(
    settings: Settings | None = None,
    engine: Engine | None = None,
    tracer_provider: Any | None = None,
) -> FastAPI:
    """Build the app. Its services (:mod:`app.services`) are built when it starts and closed
    when it stops. With ``engine`` given (tests, benchmarks) start-up reuses it and does not
    close it; otherwise the lifespan connects to Neo4j, loads models and applies migrations.
    ``tracer_provider``: where spans go with ``MNEMOGRAPH_OTEL`` on (default: the global one)."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = build_services(settings, engine)
        observability.meter(app, services)
        app.state.services = services
        log.info("Mnemograph ready: %s", services.engine.readiness())
        try:
            async with mcp_http.running(app):
                yield
        finally:
            services.close()
            observability.unmeter(app)

    app = FastAPIOffline(  # /docs and /redoc load their assets from the package, not a CDN
        title="Mnemograph",
        version="0.1.0",
        description="Long-term memory for AI agents on Neo4j + Graph Data Science.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.services = None
    errors.install(app)
    app.add_middleware(errors.TrackWrites)
    app.add_middleware(
        Admission,
        limits=settings.parsed_admission_limits,
        wait_seconds=settings.admission_wait_seconds,
    )
    app.include_router(health.router)
    app.include_router(browser.router)
    for router in V1_ROUTERS:
        app.include_router(router, dependencies=[Depends(require_key)])
    mcp_http.install(app, settings)
    keys = bool(settings.parsed_api_keys)
    openapi.install(app, settings.health_requires_key and keys, keys)
    observability.install(app, tracer_provider)
    return app
