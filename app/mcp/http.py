"""``/mcp`` on the API: the MCP tools over streamable HTTP (stateless, JSON answers), in
the API process, behind the same bearer keys and space limits as ``/v1``."""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app.errors import error_body
from app.mcp import backend, tools
from app.mcp.errors import ToolFailure
from app.services import Services
from app.settings import ApiKey, Settings
from pipelines.errors import Unavailable

PATH = "/mcp"
LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


def _key(ctx: Context) -> ApiKey | None:
    request = ctx.request_context.request
    state = getattr(request, "scope", {}).get("state", {}) if request is not None else {}
    key = state.get("mcp_api_key")
    return key if isinstance(key, ApiKey) else None


def _resolve(ctx: Context, space: str | None) -> str:
    """The named space if the key allows it; unnamed, the key's only space."""
    key = _key(ctx)
    if space is None and key is not None and key.spaces is not None and len(key.spaces) == 1:
        (space,) = key.spaces
    if not space:
        raise ToolFailure("invalid_input", "name a space (see list_spaces)", "space")
    if key is not None and not key.allows(space):
        raise ToolFailure("forbidden", f"this API key may not access {space!r}", "space")
    return space


def _resolve_write(ctx: Context, space: str | None) -> str:
    """:func:`_resolve` for a tool that writes: a read-only key is refused."""
    key = _key(ctx)
    if key is not None and key.read_only:
        raise ToolFailure("forbidden", "this API key is read-only", "space")
    return _resolve(ctx, space)


def _allowed(ctx: Context) -> frozenset[str] | None:
    key = _key(ctx)
    return None if key is None else key.spaces


class RouteLabel:
    """What the request metrics and logs read as the route of an MCP call (``route_of``):
    ``mcp`` for the protocol's own messages, ``mcp:<tool>`` for a tool call (bounded: only
    registered tool names; ``mcp:unknown`` for any other name)."""

    def __init__(self, label: str) -> None:
        self.path_format = label


def _label(ctx: Context, tool: str | None) -> None:
    request = ctx.request_context.request
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict):
        scope["route"] = RouteLabel(f"mcp:{tool or 'unknown'}")


class _Services:
    """The app's services, read when a tool runs (they exist once the app has started)."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    def __call__(self) -> Services:
        services = self.app.state.services
        if not isinstance(services, Services) or services.closed:
            raise Unavailable("the service is starting or stopping; retry shortly")
        return services


class _Endpoint:
    """ASGI endpoint: authenticate the bearer key, then hand the call to the MCP transport."""

    def __init__(self, server: MCPServer, settings: Settings) -> None:
        self.server = server
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key: ApiKey | None = None
        scope["route"] = RouteLabel("mcp")  # a tool call then names its tool (_label)
        if self.settings.parsed_api_keys:
            headers = dict(scope.get("headers", []))
            scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
            key = _match(self.settings, token.strip()) if scheme.lower() == "bearer" else None
            if key is None:
                body = error_body("unauthorized", "missing or invalid bearer API key")
                response = JSONResponse(body, 401, headers={"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        scope.setdefault("state", {})["mcp_api_key"] = key
        await self.server.session_manager.handle_request(scope, receive, send)


def _match(settings: Settings, token: str) -> ApiKey | None:
    for key in settings.parsed_api_keys:
        if token and hmac.compare_digest(key.key.encode(), token.encode()):
            return key
    return None


def install(app: FastAPI, settings: Settings) -> None:
    """Add ``/mcp`` to ``app``; :func:`running` starts its session manager in the lifespan."""
    server = tools.build(
        backend.ServicesBackend(_Services(app)),
        _resolve,
        _allowed,
        resolve_write=_resolve_write,
        on_call=_label,
    )
    security = (
        TransportSecuritySettings(allowed_hosts=LOOPBACK_HOSTS, allowed_origins=LOOPBACK_ORIGINS)
        if settings.is_loopback()
        else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    server.streamable_http_app(
        stateless_http=True, json_response=True, transport_security=security
    )  # builds server.session_manager
    app.state.mcp = server
    endpoint = _Endpoint(server, settings)
    app.router.routes.append(Route(PATH, endpoint, methods=["GET", "POST", "DELETE"]))


@asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[None]:
    """The MCP session manager, for the app's lifetime."""
    server: MCPServer = app.state.mcp
    async with server.session_manager.run():
        yield
