"""Shared request/response pieces."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from pydantic import BaseModel, ConfigDict

#: The largest ``skip`` a list accepts (Neo4j's SKIP takes a 64-bit integer; deeper pages than
#: this are not a use of the API).
MAX_SKIP = 1_000_000
Skip = Annotated[int, Query(ge=0, le=MAX_SKIP, description="Items to skip (at most 1,000,000).")]


class StrictModel(BaseModel):
    """Request bodies reject unknown fields, so typos fail loudly with the field named."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class ErrorDetail(BaseModel):
    code: str
    message: str
    field: str | None = None


class ErrorResponse(BaseModel):
    error: ErrorDetail
