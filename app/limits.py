"""The request body limit of the write routes: 413 before an oversized body is read whole.

The routes take memories of up to ``IngestConfig.max_content_chars`` characters; the body
limit (``Settings.max_request_bytes``) bounds what a request can make the server hold in
memory before validation starts. A declared ``Content-Length`` above the limit is refused at
once; a body without one is read chunk by chunk and refused as soon as it passes the limit.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute

from app.errors import error_body

__all__ = ["BODY_LIMIT_RESPONSES", "LimitedBodyRoute"]

BODY_LIMIT_RESPONSES: dict[int | str, dict[str, Any]] = {
    413: {
        "description": "The request body is larger than MNEMOGRAPH_MAX_REQUEST_BYTES "
        "(64 MiB by default).",
    },
}


def _too_large(limit: int) -> JSONResponse:
    return JSONResponse(
        error_body(
            "payload_too_large",
            f"the request body is larger than {limit:,} bytes (MNEMOGRAPH_MAX_REQUEST_BYTES); "
            "send fewer or smaller memories per request",
        ),
        status_code=413,
    )


class LimitedBodyRoute(APIRoute):
    """An API route whose request body may not exceed ``Settings.max_request_bytes``."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def limited(request: Request) -> Response:
            limit = int(request.app.state.settings.max_request_bytes)
            declared = request.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                return _too_large(limit)
            body = bytearray()
            async for part in request.stream():
                body += part
                if len(body) > limit:
                    return _too_large(limit)
            request._body = bytes(body)  # what Request.body() returns from now on
            return await handler(request)

        return limited
