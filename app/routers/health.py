"""Liveness and readiness."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from app.auth import require_key_for_health
from app.services import Services
from pipelines.browser import browser_status

router = APIRouter(tags=["health"])

#: /readyz answers within this, whatever Neo4j does.
READINESS_TIMEOUT_SECONDS = 4.0


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """Liveness: the process answers (on the event loop: never queued behind worker threads)."""
    return {"status": "ok"}


@router.get("/readyz", dependencies=[Depends(require_key_for_health)])
async def readyz(request: Request) -> JSONResponse:
    """Readiness: Neo4j and GDS versions, index states, each model's readiness, where Neo4j
    serves Browser; 503 until ready. Answered within a few seconds whatever Neo4j does."""
    services = request.app.state.services  # None until the lifespan has built them
    if not isinstance(services, Services) or services.closed:
        body: dict[str, Any] = {"ready": False, "detail": "starting"}
        return JSONResponse(body, status_code=503, headers={"Retry-After": "1"})
    try:
        body = await asyncio.wait_for(
            run_in_threadpool(_readiness, services), READINESS_TIMEOUT_SECONDS
        )
    except TimeoutError:
        body = {"ready": False, "detail": f"no answer within {READINESS_TIMEOUT_SECONDS} s"}
    ready = bool(body["ready"])
    return JSONResponse(
        body, status_code=200 if ready else 503, headers=None if ready else {"Retry-After": "1"}
    )


def _readiness(services: Services) -> dict[str, Any]:
    body = services.engine.readiness()
    body["browser"] = browser_status(services.engine.store)
    return {k: _without_paths(v) for k, v in body.items()}


# An absolute file path (two or more parts), not part of a URL ("http://host/x" stays).
_PATH = re.compile(r"(?<![\w:/.~-])(?:~/|/)(?:[\w.@+-]+/)+([\w.@+-]*)")


def _without_paths(value: Any) -> Any:
    """The readiness document with every local file path cut to its last part ("…/name"):
    the server's layout is nobody's business (the start-up log has it in full)."""
    if isinstance(value, str):
        return _PATH.sub(lambda m: f"…/{m.group(1)}", value)
    if isinstance(value, dict):
        return {k: _without_paths(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_paths(v) for v in value]
    return value
