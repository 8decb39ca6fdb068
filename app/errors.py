"""One JSON error shape for every failure: ``{"error": {"code", "message", "field"}}``."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from neo4j.exceptions import ConstraintError, DriverError, Neo4jError
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from pipelines.errors import DomainError
from pipelines.graph import GraphUnavailable, marked, request_committed, tracking

log = logging.getLogger("mnemograph.app")


_JOB_RUN = re.compile(r"^/v1/spaces/[^/]+/jobs/[^/]+$")


class TrackWrites:
    """ASGI middleware: each HTTP request records the write transactions it commits, so that
    its 503 can say whether it may have written (:func:`pipelines.graph.tracking`), and
    when it started (the budget of its Neo4j work while Neo4j recovers from a restart)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # a job run may take minutes: its Neo4j work has no budget while Neo4j recovers
        started = None if _JOB_RUN.match(scope["path"]) else time.monotonic()
        with tracking(started):
            await self.app(scope, receive, send)


def error_body(
    code: str, message: str, field: str | None = None, may_have_committed: bool | None = None
) -> dict[str, Any]:
    """The error document; a 503 or 504 also says whether the work may have committed."""
    body: dict[str, Any] = {"code": code, "message": message, "field": field}
    if may_have_committed is not None:
        body["may_have_committed"] = may_have_committed
    return {"error": body}


def _is_read(request: Request) -> bool:
    """A route that never writes: its 503 never may have committed."""
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return True
    return request.method == "POST" and request.url.path.endswith(("/recall", "/context"))


def may_have_committed(request: Request, exc: BaseException, unknown: bool) -> bool:
    """Whether a failed request may have written: what the failure says (``unknown``
    when it says nothing), or any write transaction the request committed before it."""
    if _is_read(request):
        return False
    said = marked(exc)
    return (unknown if said is None else said) or request_committed()


@dataclass(frozen=True, slots=True)
class Outage:
    """What a 503 (or 504) says: its code, message and field, its status, how many seconds
    the caller should wait, and whether a write route's outcome is unknown when the failure
    itself does not say (:func:`may_have_committed`)."""

    code: str
    message: str
    field: str | None = None
    status: int = 503
    retry_after: str = "1"
    unknown: bool = False


def unavailable(request: Request, exc: BaseException, outage: Outage) -> JSONResponse:
    """A 503 (or 504) in the one shape, with ``Retry-After`` and ``may_have_committed``."""
    committed = may_have_committed(request, exc, outage.unknown)
    return JSONResponse(
        error_body(outage.code, outage.message, outage.field, committed),
        status_code=outage.status,
        headers={"Retry-After": outage.retry_after},
    )


def _field_of(error: dict[str, Any]) -> str | None:
    """The field a validation error names: its location without the leading request part
    (a body field may itself be called ``query``). A body that is not JSON names ``body``
    (pydantic puts the character offset where a field would be)."""
    loc = tuple(error.get("loc", ()))
    if error.get("type") == "json_invalid":
        return "body"
    if len(loc) == 1 and loc[0] == "body":
        return "body"  # the body as a whole (not an object, say)
    if loc and loc[0] in ("body", "query", "path", "header"):
        loc = loc[1:]
    return ".".join(str(p) for p in loc) or None


def _message_of(error: dict[str, Any]) -> str:
    if error.get("type") == "json_invalid":
        loc = tuple(error.get("loc", ()))
        where = f" at character {loc[-1]}" if loc and isinstance(loc[-1], int) else ""
        reason = (error.get("ctx") or {}).get("error") or "JSON decode error"
        return f"the body is not valid JSON{where}: {reason}"
    return str(error.get("msg"))


def install(app: FastAPI) -> None:
    """Every failure answers in the one shape (a handler per kind; the most specific wins)."""
    for exc_class, handler in _HANDLERS:
        app.exception_handler(exc_class)(handler)
    app.exception_handler(StarletteHTTPException)(_http_handler(app))


async def _domain(request: Request, exc: DomainError) -> JSONResponse:
    if exc.status in (503, 504):
        wait = getattr(exc, "retry_after", None)  # a deadline says how long it allowed
        outage = Outage(
            exc.code,
            exc.message,
            field=exc.field,
            status=exc.status,
            retry_after=str(wait) if wait else "1",
        )
        return unavailable(request, exc, outage)
    return JSONResponse(error_body(exc.code, exc.message, exc.field), status_code=exc.status)


async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
    return _invalid(list(exc.errors()))


async def _model(_: Request, exc: ValidationError) -> JSONResponse:
    """A domain model built inside a route (a recall request made from another body)."""
    return _invalid([dict(e) for e in exc.errors()])


def _http_handler(app: FastAPI) -> Callable[..., Awaitable[JSONResponse]]:
    """The handler of Starlette's HTTP errors; a 405 names every method ``app`` serves at
    the path."""

    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed"}
        headers = dict(getattr(exc, "headers", None) or {})
        if exc.status_code == 405:
            # Starlette names only the first matching route's methods; a path may have several
            headers["Allow"] = ", ".join(allowed_methods(app, request.url.path))
        return JSONResponse(
            error_body(code.get(exc.status_code, "http_error"), str(exc.detail)),
            status_code=exc.status_code,
            headers=headers or None,
        )

    return _http


async def _graph(request: Request, exc: GraphUnavailable) -> JSONResponse:
    return unavailable(request, exc, Outage("graph_unavailable", str(exc)))


async def _constraint(_: Request, exc: ConstraintError) -> JSONResponse:
    """A uniqueness constraint caught a concurrent write the checks did not see."""
    message = f"a concurrent request wrote the same ids: {exc.message or exc}"
    return JSONResponse(error_body("conflict", message), status_code=409)


async def _driver(request: Request, exc: Exception) -> JSONResponse:
    """Any other database or driver failure: the caller may retry; never a 500. Unless
    the store said otherwise, a write route's outcome is unknown."""
    log.warning("database error: %s", exc, exc_info=exc)
    message = f"the database could not complete the request ({type(exc).__name__})"
    return unavailable(request, exc, Outage("graph_error", message, unknown=True))


async def _surrogate(_: Request, exc: UnicodeEncodeError) -> JSONResponse:
    """Text that cannot be encoded (a lone UTF-16 surrogate) wherever it was sent."""
    message = "the request contains text with a lone UTF-16 surrogate"
    return JSONResponse(error_body("invalid_input", message), status_code=422)


async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    """The last resort: the documented JSON shape, never a stack trace."""
    log.error("unhandled error", exc_info=exc)
    return JSONResponse(
        error_body("internal_error", "an unexpected error occurred; it has been logged"),
        status_code=500,
    )


#: Each failure kind and its handler (Starlette's HTTP errors need the app: see install).
_HANDLERS: tuple[tuple[type[Exception], Callable[..., Awaitable[JSONResponse]]], ...] = (
    (DomainError, _domain),
    (RequestValidationError, _validation),
    (ValidationError, _model),
    (GraphUnavailable, _graph),
    (ConstraintError, _constraint),
    (Neo4jError, _driver),
    (DriverError, _driver),
    (UnicodeEncodeError, _surrogate),
    (Exception, _unexpected),
)


def allowed_methods(app: FastAPI, path: str) -> list[str]:
    """Every method the OpenAPI document serves at this path (the ``Allow`` header of a 405)."""
    methods: set[str] = set()
    for pattern, verbs in _path_methods(app):
        if pattern.fullmatch(path):
            methods |= verbs
    return sorted(methods)


def _path_methods(app: FastAPI) -> list[tuple[re.Pattern[str], set[str]]]:
    cached: list[tuple[re.Pattern[str], set[str]]] | None = getattr(app.state, "path_methods", None)
    if cached is None:
        cached = [
            (
                re.compile(re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template))),
                {m.upper() for m in ops if m.upper() in _HTTP_METHODS},
            )
            for template, ops in app.openapi().get("paths", {}).items()
        ]
        app.state.path_methods = cached
    return cached


_HTTP_METHODS = frozenset({"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"})


def _invalid(errors: list[dict[str, Any]]) -> JSONResponse:
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    field = _field_of(first)
    reason = _message_of(first)
    message = f"{field}: {reason}" if field and field != "body" else reason
    body = error_body("invalid_input", message, field)
    body["error"]["details"] = [{"field": _field_of(e), "message": _message_of(e)} for e in errors]
    return JSONResponse(body, status_code=422)
