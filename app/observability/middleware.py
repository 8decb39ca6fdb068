"""One ASGI middleware per request: a request id (the caller's ``X-Request-ID`` when it is a
sane token, else a new one) echoed in the response, one structured log line, and the
request's metrics under its route template (bounded labels: never the raw path). Every log
line written while a request is served carries its request id and route template."""

from __future__ import annotations

import contextvars
import json
import logging
import re
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.admission import REFUSED
from app.observability.metrics import Metrics

HEADER = "x-request-id"
SANE_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")
request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)
log = logging.getLogger("mnemograph.access")


request_scope: contextvars.ContextVar[Scope | None] = contextvars.ContextVar(
    "request_scope", default=None
)


def _template(route: Any) -> str | None:
    path = getattr(route, "path_format", None) or getattr(route, "path", None)
    return str(path) if path else None


def route_of(scope: Scope) -> str:
    """The template of the route of ``scope``: the one the router recorded when it served
    the request, else (refused before routing, by admission) the one the app's router would
    have chosen; ``unmatched`` for a path no route takes. A bounded label, never the raw
    path."""
    if (served := _template(scope.get("route"))) is not None:
        return served
    router = getattr(scope.get("app"), "router", None)
    partial = None  # as the router does: a full match (path and method) first
    for route in getattr(router, "routes", ()):
        try:
            match, _ = route.matches(scope)
        except (KeyError, TypeError):  # a scope a route cannot read (not http)
            return "unmatched"
        if match == Match.FULL:
            return _template(route) or "unmatched"
        if match == Match.PARTIAL and partial is None:
            partial = _template(route)
    return partial or "unmatched"


class RequestMiddleware:
    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers", [])).get(HEADER.encode(), b"").decode("latin-1")
        rid = given if SANE_ID.match(given) else uuid.uuid4().hex
        token = request_id.set(rid)
        scope_token = request_scope.set(scope)
        status = 500
        start = time.perf_counter()
        self.metrics.in_flight.inc()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (HEADER.encode(), rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - start
            self.metrics.in_flight.dec()
            route = route_of(scope)
            self.metrics.observe_request(route, scope["method"], status, seconds)
            if (refused := scope.get(REFUSED)) is not None:
                self.metrics.refusals.labels(route, str(refused)).inc()
            log.info(
                "request",
                extra={"http": {"method": scope["method"], "route": route,
                                "status": status, "ms": round(seconds * 1000, 2)}},
            )  # fmt: skip
            request_scope.reset(scope_token)
            request_id.reset(token)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC), level, logger, message, request id, extras."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = request_id.get()
        if rid is not None:
            out["request_id"] = rid
        scope = request_scope.get()
        if scope is not None:  # resolved when a line is written, not per request
            out["route"] = route_of(scope)
        http = getattr(record, "http", None)
        if http is not None:
            out["http"] = http
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def json_logging(level: int = logging.INFO) -> None:
    """Route the root logger (and uvicorn's) through :class:`JsonFormatter` on stderr."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers = []
        logger.propagate = name != "uvicorn.access"  # our access line replaces uvicorn's
