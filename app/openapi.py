"""The OpenAPI document, completed: every operation lists the error statuses it can answer
(all in the one JSON error shape, :class:`~app.schemas.common.ErrorResponse`), ``/v1`` names
the bearer scheme when API keys are configured (and only then: without keys no call needs
one), and a 503 says it carries ``Retry-After``."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from app.auth import is_write
from app.schemas.common import ErrorResponse

SCHEME = "bearerAuth"
_ERROR_REF = {"$ref": "#/components/schemas/ErrorResponse"}

_WHY = {
    400: "The body could not be read as JSON text (not UTF-8).",
    401: "No API key, or an unknown one (keys are configured).",
    403: "The API key may not use this space, is read-only and this route writes, or (deleting "
    "a space) is not a read-write key limited to no space.",
    404: "The space, or the item named in the path, does not exist.",
    409: "A conflicting write: the same id with other content, or the space is being erased.",
    422: "Invalid input; `error.field` names the field.",
    503: "Overloaded or Neo4j unavailable: retry after `Retry-After` seconds; "
    "`error.may_have_committed` says whether the work may have been written (docs/errors.md).",
}


def statuses(
    path: str, method: str, health_key: bool, body: bool = False, keys: bool = True
) -> set[int]:
    """The error statuses an operation can answer (``body``: it takes a request body;
    ``keys``: API keys are configured, so 401 and 403 are possible)."""
    if path == "/readyz":
        return {503} | ({401} if health_key else set())
    if not path.startswith("/v1/"):
        return set()
    out = {422, 503} | ({401, 403} if keys else set())
    if "{" in path:
        out.add(404)
    if is_write(method, path):
        out.add(409)
    if body:
        out.add(400)
    return out


def _response(status: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "description": _WHY[status],
        "content": {"application/json": {"schema": _ERROR_REF}},
    }
    if status == 503:
        out["headers"] = {
            "Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}
        }
    if status == 401:
        out["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"}}}
    return out


def complete(document: dict[str, Any], health_key: bool, keys: bool = True) -> dict[str, Any]:
    """``document`` with the error responses, the error model and (``keys``: API keys are
    configured) the security scheme."""
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    model = ErrorResponse.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(model.pop("$defs", {}))
    schemas["ErrorResponse"] = model
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    if keys:
        components["securitySchemes"] = {
            SCHEME: {
                "type": "http",
                "scheme": "bearer",
                "description": "An API key from MNEMOGRAPH_API_KEYS ('@read' keys: reads only).",
            }
        }
    for path, operations in document.get("paths", {}).items():
        for method, op in operations.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            responses = op.setdefault("responses", {})
            found = statuses(path, method, health_key, "requestBody" in op, keys)
            for status in sorted(found):
                said = responses.get(str(status), {}).get("description")
                responses[str(status)] = _response(status)
                if said and said != "Validation Error":  # the route's own words are kept
                    responses[str(status)]["description"] = said
            for code, response in responses.items():  # errors a route documents itself
                if code[0] in "45" and "content" not in response:
                    response["content"] = {"application/json": {"schema": _ERROR_REF}}
            if keys and (path.startswith("/v1/") or (path == "/readyz" and health_key)):
                op["security"] = [{SCHEME: []}]
    return document


def install(app: FastAPI, health_key: bool, keys: bool = True) -> None:
    """Serve the completed document (built once, on the first request for it)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            app.openapi_schema = complete(document, health_key, keys)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
