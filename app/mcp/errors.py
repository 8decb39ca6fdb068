"""Tool errors a model can act on: one compact JSON shape, ``{"error": {"code", "field",
"message"}}``, the same as the HTTP API's, never raw pydantic text or a stack trace."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from neo4j.exceptions import ConstraintError, DriverError, Neo4jError
from pydantic import ValidationError

from app.mcp.results import as_text
from mnemograph.client import MnemographError
from pipelines.errors import DomainError
from pipelines.graph_faults import GraphUnavailable

T = TypeVar("T")

#: What pydantic's terse messages mean to a model that must fix its call.
_REASONS = {"missing": "required", "extra_forbidden": "not an argument of this tool"}


class ToolFailure(ToolError):
    """A refusal with its code, the argument it names and why; its text is the JSON body."""

    def __init__(self, code: str, message: str, field: str | None = None, **extra: Any) -> None:
        self.body: dict[str, Any] = {"error": {"code": code, "field": field, "message": message,
                                               **extra}}  # fmt: skip
        super().__init__(as_text(self.body))


def from_validation(exc: ValidationError) -> ToolFailure:
    """The first problem of rejected arguments: its field (dotted path) and the reason."""
    first = exc.errors(include_url=False)[0]
    field = ".".join(str(p) for p in first["loc"]) or None
    reason = _REASONS.get(first["type"], first["msg"])
    return ToolFailure("invalid_input", reason, field)


async def guard(work: Awaitable[T]) -> T:
    """A refusal of the engine or the server becomes a :class:`ToolFailure`."""
    try:
        return await work
    except DomainError as exc:
        refused: dict[str, Any] = {"may_have_committed": False} if exc.status == 503 else {}
        raise ToolFailure(exc.code, exc.message, exc.field, **refused) from None
    except MnemographError as exc:
        extra: dict[str, Any] = {}
        committed = getattr(exc, "may_have_committed", None)  # a 503 of the server, if said
        if isinstance(committed, bool):
            extra["may_have_committed"] = committed
        if exc.retry_after is not None:
            extra["retry_after"] = exc.retry_after
        raise ToolFailure(exc.code, exc.message, exc.field, **extra) from None
    except ValidationError as exc:
        raise from_validation(exc) from None
    except GraphUnavailable as exc:
        raise ToolFailure("graph_unavailable", str(exc), None, retry_after=1) from None
    except ConstraintError as exc:
        message = f"a concurrent request wrote the same ids: {exc.message or exc}"
        raise ToolFailure("conflict", message) from None
    except (Neo4jError, DriverError) as exc:
        message = f"the database could not complete the request ({type(exc).__name__})"
        raise ToolFailure("graph_error", message, None, retry_after=1) from None
