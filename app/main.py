"""FastAPI app factory."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from app import errors
from app.auth import require_key
from app.routers import context, graph, health, jobs, memories, recall, spaces
from app.settings import Settings
from app.wiring import engine_settings
from pipelines.engine import Engine

log = logging.getLogger("mnemograph.app")

V1_ROUTERS = [
    spaces.router,
    memories.router,
    graph.router,
    context.router,
    jobs.router,
    recall.router,
]


def create_app(settings: Settings | None = None, engine: Engine | None = None) -> FastAPI:
    """Build the app. With ``engine`` given (tests, benchmarks) start-up reuses it and does not
    close it; otherwise the lifespan connects to Neo4j, loads models and applies migrations."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own = engine is None
        app.state.engine = engine or Engine.start(engine_settings(settings))
        log.info("Mnemograph ready: %s", app.state.engine.readiness())
        # Reads context assembly issues ahead of the step that needs them.
        app.state.read_ahead = ThreadPoolExecutor(max_workers=8, thread_name_prefix="assemble")
        scheduler = None
        if settings.scheduler_enabled:
            from pipelines.consolidate.scheduler import Scheduler

            scheduler = Scheduler(app.state.engine, intervals=settings.scheduler_intervals)
            scheduler.start()
        try:
            yield
        finally:
            if scheduler is not None:
                scheduler.stop()
            app.state.read_ahead.shutdown(wait=True, cancel_futures=True)
            if own:
                app.state.engine.close()

    app = FastAPI(
        title="Mnemograph",
        version="0.1.0",
        description="Long-term memory for AI agents on Neo4j + Graph Data Science.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engine = None
    errors.install(app)
    app.include_router(health.router)
    for router in V1_ROUTERS:
        app.include_router(router, dependencies=[Depends(require_key)])
    return app
