"""Field types and coercions shared by the request models at the edges: an ``integer`` and a
``date-time`` mean what the OpenAPI document says they mean."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BeforeValidator


def integral(value: object) -> object:
    """JSON Schema's ``integer`` includes ``34.0``: a float without a fraction is that integer
    (strict fields still refuse booleans, strings and ``34.5``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _not_a_number(value: object) -> object:
    """A time is an ISO 8601 string (as the schema says), not a number of seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError("a time is an ISO 8601 string, not a number")
    return value


#: A ``datetime`` field that takes what the OpenAPI document's ``date-time`` string allows.
Timestamp = Annotated[datetime, BeforeValidator(_not_a_number)]
