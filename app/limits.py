"""The limits of the write routes: a body limit (413 before an oversized body is read whole),
a deadline for the work, and the client's disconnection noticed while the work runs.

The routes take memories of up to ``IngestConfig.max_content_chars`` characters; the body
limit (``Settings.max_request_bytes``) bounds what a request can make the server hold in
memory before validation starts. A declared ``Content-Length`` above the limit is refused at
once; a body without one is read chunk by chunk and refused as soon as it passes the limit.
Once the body is read, a watcher waits for the client's disconnection beside the route, so the
write path (:class:`~pipelines.ingest.deadline.Deadline`) stops work nobody waits for.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.requests import ClientDisconnect

from app.errors import error_body
from app.settings import Settings
from pipelines.ingest.deadline import Deadline

__all__ = ["BODY_LIMIT_RESPONSES", "LimitedBodyRoute", "ingest_deadline"]

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


async def _watch(request: Request, gone: threading.Event) -> None:
    """Set ``gone`` when the client disconnects (the body has been read: the next message
    is the disconnection)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            gone.set()
            return


def _retrieve(task: asyncio.Task[None]) -> None:
    """A watcher's end is never an error of the request (a failed receive is not logged)."""
    if not task.cancelled():
        task.exception()


def ingest_deadline(request: Request, settings: Settings) -> Deadline:
    """The deadline of an ingest request, aware of its client's disconnection."""
    gone = getattr(request.state, "client_gone", None)
    return Deadline.after(
        settings.ingest_deadline_seconds, gone.is_set if isinstance(gone, threading.Event) else None
    )


class LimitedBodyRoute(APIRoute):
    """An API route whose request body may not exceed ``Settings.max_request_bytes``; a POST
    learns of its client's disconnection (``request.state.client_gone``)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def limited(request: Request) -> Response:
            limit = int(request.app.state.settings.max_request_bytes)
            declared = request.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                return _too_large(limit)
            body = bytearray()
            try:
                async for part in request.stream():
                    body += part
                    if len(body) > limit:
                        return _too_large(limit)
            except ClientDisconnect:  # gone before its body was read: nobody reads an answer
                return JSONResponse(
                    error_body("client_closed_request", "the client closed the connection"),
                    status_code=499,
                )
            request._body = bytes(body)  # what Request.body() returns from now on
            if request.method != "POST":
                return await handler(request)
            request.state.client_gone = threading.Event()
            watcher = asyncio.create_task(_watch(request, request.state.client_gone))
            watcher.add_done_callback(_retrieve)
            try:
                return await handler(request)
            finally:
                watcher.cancel()

        return limited
