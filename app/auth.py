"""Bearer API keys. With no keys configured every call is allowed (loopback only, see settings).

A key may be limited to named spaces (every ``/v1/spaces/{space}`` call checks it) and may be
read-only (``@read``: 403 on every write route). Deleting a whole space takes a read-write key
limited to no space (docs/security.md).
"""

from __future__ import annotations

import hmac

from fastapi import HTTPException, Request

from app.settings import ApiKey, Settings

#: Methods that write, unless the route is one of :data:`READ_ONLY_POSTS`.
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: POSTs that only read (a body too large for a query string).
READ_ONLY_POSTS = frozenset({"/v1/spaces/{space}/recall", "/v1/spaces/{space}/context"})
#: Routes only a read-write key limited to no space may call (method, path template).
ADMIN_ONLY = frozenset({("DELETE", "/v1/spaces/{space}")})


def is_write(method: str, path: str) -> bool:
    """Whether ``method`` on the route ``path`` (its template) writes."""
    return method.upper() in WRITE_METHODS and path not in READ_ONLY_POSTS


def _match(settings: Settings, token: str) -> ApiKey | None:
    for key in settings.parsed_api_keys:
        if hmac.compare_digest(key.key.encode(), token.encode()):
            return key
    return None


def require_key(request: Request) -> None:
    """Router dependency for /v1: authenticate, then authorise the path's space and the key's
    role for the route."""
    settings: Settings = request.app.state.settings
    if not settings.parsed_api_keys:
        request.state.api_key = None
        return
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise HTTPException(401, "missing bearer API key", headers={"WWW-Authenticate": "Bearer"})
    key = _match(settings, token.strip())
    if key is None:
        raise HTTPException(401, "invalid API key", headers={"WWW-Authenticate": "Bearer"})
    request.state.api_key = key
    space = request.path_params.get("space")
    if space is not None and not key.allows(space):
        raise HTTPException(403, f"this API key may not access space {space!r}")
    route = getattr(request.scope.get("route"), "path", request.url.path)
    if key.read_only and is_write(request.method, route):
        raise HTTPException(403, "this API key is read-only")
    if (request.method.upper(), route) in ADMIN_ONLY and not key.admin:
        raise HTTPException(403, "only a read-write API key limited to no space may do this")


def require_key_for_health(request: Request) -> None:
    """Dependency of /readyz and /metrics: a key when ``health_requires_key`` is on (and keys
    are set); otherwise open, as a probe from the orchestrator expects."""
    settings: Settings = request.app.state.settings
    if settings.health_requires_key:
        require_key(request)


def allowed_spaces(request: Request) -> frozenset[str] | None:
    """The spaces the caller's key is limited to (None: all)."""
    key: ApiKey | None = getattr(request.state, "api_key", None)
    return None if key is None else key.spaces
