"""Shared request/response pieces."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import BaseModel, ConfigDict, Field

#: The largest ``skip`` a list accepts (Neo4j's SKIP takes a 64-bit integer; deeper pages than
#: this are not a use of the API).
MAX_SKIP = 1_000_000
Skip = Annotated[int, Query(ge=0, le=MAX_SKIP, description="Items to skip (at most 1,000,000).")]


class StrictModel(BaseModel):
    """Request bodies reject unknown fields, so typos fail loudly with the field named."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class FieldError(BaseModel):
    field: str | None = None
    message: str


class ErrorDetail(BaseModel):
    code: str = Field(description="Machine-readable: invalid_input, not_found, conflict, ...")
    message: str
    field: str | None = Field(None, description="The field at fault, when there is one.")
    details: list[FieldError] | None = Field(None, description="Every invalid field (422).")


class ErrorResponse(BaseModel):
    error: ErrorDetail


#: Path ids, bounded like the bodies that create them: a longer one is a 422 naming it, not a
#: 404 that echoes it.
SpacePath = Annotated[str, Path(min_length=1, max_length=64, description="The space's id.")]
IdPath = Annotated[str, Path(min_length=1, max_length=200)]
KeyPath = Annotated[str, Path(min_length=1, max_length=500, description="An entity's key.")]
