"""Liveness and readiness."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """Liveness: the process answers."""
    return {"status": "ok"}


@router.get("/readyz")
def readyz(request: Request) -> JSONResponse:
    """Readiness: Neo4j and GDS versions, index states, each model's readiness; 503 until ready."""
    engine = getattr(request.app.state, "engine", None)
    if engine is None:
        body: dict[str, Any] = {"ready": False, "detail": "starting"}
        return JSONResponse(body, status_code=503)
    body = engine.readiness()
    return JSONResponse(body, status_code=200 if body["ready"] else 503)
