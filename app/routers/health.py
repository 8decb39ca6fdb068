"""Liveness and readiness."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from app.services import Services
from pipelines.browser import browser_status

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """Liveness: the process answers."""
    return {"status": "ok"}


@router.get("/readyz")
def readyz(request: Request) -> JSONResponse:
    """Readiness: Neo4j and GDS versions, index states, each model's readiness, where Neo4j
    serves Browser; 503 until ready."""
    services = request.app.state.services  # None until the lifespan has built them
    if not isinstance(services, Services) or services.closed:
        body: dict[str, Any] = {"ready": False, "detail": "starting"}
        return JSONResponse(body, status_code=503, headers={"Retry-After": "1"})
    body = services.engine.readiness()
    body["browser"] = browser_status(services.engine.store)
    return JSONResponse(body, status_code=200 if body["ready"] else 503)
