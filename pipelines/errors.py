"""Domain errors. The HTTP layer maps them to status codes with a stable JSON shape."""

from __future__ import annotations


class DomainError(Exception):
    status = 400
    code = "bad_request"

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class InvalidInput(DomainError):
    status = 422
    code = "invalid_input"


class NotFound(DomainError):
    status = 404
    code = "not_found"


class Conflict(DomainError):
    status = 409
    code = "conflict"


class Busy(DomainError):
    """A job lease is held by another runner."""

    status = 409
    code = "busy"


class Unavailable(DomainError):
    status = 503
    code = "unavailable"
