"""Request/response models for POST /v1/spaces/{space}/recall.

The request body is the domain :class:`~pipelines.recall.request.RecallRequest` itself: its
constraints live there, once, and a violation is a 422 naming the field. The response models
are the ones the SDK reads too (:mod:`mnemograph.schema`)."""

from __future__ import annotations

from mnemograph.schema import RecallOut, RecallResult
from pipelines.recall.request import RecallRequest

__all__ = ["RecallIn", "RecallOut", "RecallResult"]

RecallIn = RecallRequest
