"""One JSON error shape for every failure: ``{"error": {"code", "message", "field"}}``."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pipelines.errors import DomainError
from pipelines.graph import GraphUnavailable


def error_body(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "field": field}}


def _field_of(loc: tuple[Any, ...]) -> str | None:
    """The field path of a validation error: its location without the leading part of the
    request it is in (a body field may itself be called ``query``)."""
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    return ".".join(parts) or None


def install(app: FastAPI) -> None:
    @app.exception_handler(DomainError)
    async def _domain(_: Request, exc: DomainError) -> JSONResponse:
        return JSONResponse(error_body(exc.code, exc.message, exc.field), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
        field = _field_of(tuple(first.get("loc", ())))
        message = f"{field}: {first.get('msg')}" if field else str(first.get("msg"))
        body = error_body("invalid_input", message, field)
        body["error"]["details"] = [
            {"field": _field_of(tuple(e.get("loc", ()))), "message": e.get("msg")} for e in errors
        ]
        return JSONResponse(body, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed"}
        return JSONResponse(
            error_body(code.get(exc.status_code, "http_error"), str(exc.detail)),
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )

    @app.exception_handler(GraphUnavailable)
    async def _graph(_: Request, exc: GraphUnavailable) -> JSONResponse:
        return JSONResponse(error_body("graph_unavailable", str(exc)), status_code=503)
