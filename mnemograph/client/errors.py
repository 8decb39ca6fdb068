"""Exceptions of the SDK: one per error class of the API, each carrying the server's error
``code``, ``message`` and the ``field`` it names (the API's one error shape)."""

from __future__ import annotations

from typing import Any


class MnemographError(Exception):
    """A call failed. ``status`` is the HTTP status (0: no response), ``code`` the server's
    error code, ``field`` the request field it names (if any), ``details`` every problem."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        code: str = "error",
        field: str | None = None,
        details: list[dict[str, Any]] | None = None,
        retry_after: float | None = None,
        may_have_committed: bool | None = None,
    ) -> None:
        super().__init__(f"{code} ({status}): {message}" if status else message)
        self.message = message
        self.status = status
        self.code = code
        self.field = field
        self.details = details or []
        self.retry_after = retry_after
        #: 503/504: whether the server may have written the work (None: it did not say)
        self.may_have_committed = may_have_committed


class InvalidInput(MnemographError):
    """422: the request was refused; ``field`` names the offending field."""


class Unauthorized(MnemographError):
    """401: missing or unknown API key."""


class Forbidden(MnemographError):
    """403: the API key may not access this space."""


class NotFound(MnemographError):
    """404: no such space, memory, run, ..."""


class Conflict(MnemographError):
    """409: e.g. a job already running for the space."""


class Unavailable(MnemographError):
    """503, 504 or 429 after the retries: the server or its database is busy or down (a write
    whose ``may_have_committed`` is not ``False`` is not retried: its outcome is unknown)."""


class ConnectionFailed(MnemographError):
    """The server could not be reached at all (after the retries)."""


_BY_STATUS: dict[int, type[MnemographError]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    422: InvalidInput,
    429: Unavailable,
    503: Unavailable,
    504: Unavailable,
}


def from_response(status: int, body: Any, text: str, retry_after: float | None) -> MnemographError:
    """The exception for an error response (the API's ``{"error": {...}}`` shape, or any
    other body from a proxy in between)."""
    cls = _BY_STATUS.get(status, MnemographError)
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return cls(
            str(error.get("message", "")),
            status=status,
            code=str(error.get("code", "error")),
            field=error.get("field"),
            details=error.get("details"),
            retry_after=retry_after,
            may_have_committed=flag
            if isinstance(flag := error.get("may_have_committed"), bool)
            else None,
        )
    return cls(
        text[:500] or f"HTTP {status}", status=status, code="http_error", retry_after=retry_after
    )
