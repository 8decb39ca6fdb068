"""Shared request/response pieces."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    """Request bodies reject unknown fields, so typos fail loudly with the field named."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class ErrorDetail(BaseModel):
    code: str
    message: str
    field: str | None = None


class ErrorResponse(BaseModel):
    error: ErrorDetail
