"""Request/response models for POST /v1/spaces/{space}/recall.

The request body is the domain :class:`~pipelines.recall.request.RecallRequest` itself: its
constraints live there, once, and a violation is a 422 naming the field."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pipelines.recall.request import RecallRequest

RecallIn = RecallRequest


class RecallResult(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    content: str
    score: float
    session_id: str | None = None
    stage_id: str | None = None
    time: datetime | None = None
    speaker: str | None = None
    role: str | None = None
    explain: dict[str, Any] | None = Field(
        None,
        description="With explain=true: per-signal rank, score, weight and contribution "
        "(`signals`), the `fused` score and `boosts`, then one entry per later step that "
        "scored this result: `rerank`, `session_document`, `late_interaction` (MaxSim of the "
        "query's token vectors with the memory's, less a length penalty), "
        "`session_late_interaction` (the rank and MaxSim score of the result's session, "
        "over all of the session's token vectors), `selection` (MMR relevance, similarity "
        "penalty and session-novelty penalty); for a long memory (indexed as chunks), "
        "`chunks`: how many it has (`of`), the signals its best chunk decided (`signals`) and "
        "the chunks that matched (`matched`: id, index, start and end of the span of the "
        "memory's text, scores), best first.",
    )


class RecallOut(BaseModel):
    """The domain :class:`~pipelines.recall.request.RecallResponse`, as JSON."""

    model_config = ConfigDict(from_attributes=True)

    results: list[RecallResult]
    intent: str
    abstain: bool
    abstain_reason: str | None = None
    complete: bool
    timings_ms: dict[str, float]
    candidates: int
