"""Request/response models for POST /v1/spaces/{space}/recall."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.schemas.common import StrictModel
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.presets import DEFAULT_PRESET, PRESETS
from pipelines.recall.service import ResultOrder

_CFG = DEFAULT_RECALL_CONFIG
PresetName = Literal[tuple(PRESETS)]  # type: ignore[valid-type]


class RecallFiltersIn(StrictModel):
    """Hard filters; every one is optional and they combine with AND."""

    time_from: datetime | None = Field(None, description="Earliest event time (inclusive).")
    time_to: datetime | None = Field(None, description="Latest event time (inclusive).")
    roles: list[str] | None = Field(
        None, description="user / assistant / system / tool / note", min_length=1
    )
    speakers: list[str] | None = Field(
        None, description="Speaker names (case-insensitive).", min_length=1
    )
    kinds: list[str] | None = Field(None, description="turn, note, fact, ...", min_length=1)
    stages: list[str] | None = Field(None, description="Stage ids or labels.", min_length=1)
    sessions: list[str] | None = Field(None, description="Session ids.", min_length=1)
    tags: list[str] | None = Field(None, description="Any of these tags.", min_length=1)


class RecallIn(StrictModel):
    # Emptiness and length are checked by the service (422 naming ``query``); the schema
    # only documents them.
    query: str = Field(
        ...,
        description="What to recall: a question or keywords (plain text; Lucene syntax is "
        f"treated as text). Not blank, at most {_CFG.max_query_chars} characters.",
        json_schema_extra={"minLength": 1, "maxLength": _CFG.max_query_chars},
    )
    k: int = Field(_CFG.default_k, ge=_CFG.min_k, le=_CFG.max_k, description="Results wanted.")
    filters: RecallFiltersIn = Field(default_factory=RecallFiltersIn)
    include_superseded: bool = Field(False, description="Also return superseded memories.")
    explain: bool = Field(False, description="Per-signal ranks and scores for every result.")
    deadline_ms: int | None = Field(
        None,
        ge=1,
        description="Time budget: optional stages are skipped once it has passed and the "
        "response says complete=false.",
    )
    touch: bool = Field(True, description="Count this read as an access (heat); false: no writes.")
    now: datetime | None = Field(
        None, description="Question time for 'last March', 'recently'... Default: now."
    )
    preset: PresetName = Field(  # type: ignore[valid-type]
        DEFAULT_PRESET, description=f"Search configuration, one of {list(PRESETS)}."
    )
    order: ResultOrder = Field(
        "relevance",
        description="Order of the results: 'relevance' (rank order), 'time', or 'auto': "
        "event-order questions ('what happened first...') in time order and everything else "
        "by rank. It never changes which memories are returned.",
    )
    session_novelty: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="Selection charges a result whose conversation session already has a "
        "pick this much normalised relevance, once, so the results cover more sessions "
        f"(default {_CFG.session_novelty}; 0: off). Off suits packing a token budget from "
        "the results, where a session's second-best turn is worth its room.",
    )


class RecallResult(BaseModel):
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
        "penalty and session-novelty penalty).",
    )


class RecallOut(BaseModel):
    results: list[RecallResult]
    intent: str
    abstain: bool
    abstain_reason: str | None = None
    complete: bool
    timings_ms: dict[str, float]
    candidates: int
