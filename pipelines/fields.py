"""Field types shared by the request models at the edges."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator


def _integral(value: object) -> object:
    """JSON Schema's ``integer`` includes ``34.0``: a float without a fraction is that integer
    (strict fields still refuse booleans, strings and ``34.5``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


#: An ``int`` field that accepts what the OpenAPI document's ``integer`` allows.
WholeNumber = Annotated[int, BeforeValidator(_integral)]
