"""Bearer API keys. With no keys configured every call is allowed (loopback only, see settings).

A key may be limited to named spaces; every ``/v1/spaces/{space}`` call checks it.
"""

from __future__ import annotations

import hmac

from fastapi import HTTPException, Request

from app.settings import ApiKey, Settings


def _match(settings: Settings, token: str) -> ApiKey | None:
    for key in settings.parsed_api_keys:
        if hmac.compare_digest(key.key.encode(), token.encode()):
            return key
    return None


def require_key(request: Request) -> None:
    """Router dependency for /v1: authenticate, then authorise the path's space."""
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
