"""What a recall asks for and what it returns.

:class:`RecallRequest` is validated once, here: it is the body of ``POST /recall`` as well
as what services pass to :meth:`~pipelines.recall.service.Recaller.recall`, so every
constraint (k bounds, query length, the time range, ...) lives in this one model and an
invalid request is a 422 naming the field wherever it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from pipelines.fields import NOT_BLANK_PATTERN, Timestamp, integral, is_blank
from pipelines.graph import as_utc
from pipelines.recall.query import searchable_text

MIN_K = 1
MAX_K = 100
DEFAULT_K = 10
MAX_QUERY_CHARS = 2_000
#: Candidates selection may consider (``oversample``), at most.
MAX_OVERSAMPLE = 1_000
#: The longest time budget a recall may ask for (ms).
MAX_DEADLINE_MS = 60_000

ResultOrder = Literal["relevance", "time", "auto"]
#: The presets a request can name (:data:`pipelines.recall.presets.PRESETS`): ``full`` (the
#: default), ``fast`` (``full`` without late interaction) and ``dense`` (vector similarity
#: only, for debugging). Experiments build their own presets and hand them to the Recaller.
PresetName = Literal["full", "fast", "dense"]
DEFAULT_PRESET: PresetName = "full"


def _clean(query: str) -> str:
    """The searchable text of a query the schema allows: blank is refused; a query of only
    control or format characters is kept as ``""`` (recall answers it with no results)."""
    if is_blank(query):
        raise ValueError("query is empty")
    return searchable_text(query)


#: Bounds apply to the text as sent (JSON Schema's maxLength), cleaning comes after.
Query = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS), AfterValidator(_clean)]
Names = Annotated[tuple[str, ...], Field(min_length=1)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RecallFilters(_Frozen):
    """Hard filters, applied inside every signal; every one is optional and they combine with
    AND. Times are inclusive; speakers match case-insensitively; stages match a stage id or
    label."""

    # time_to comes first so that time_from's check can see it
    time_to: Timestamp | None = Field(None, description="Latest event time (inclusive).")
    time_from: Timestamp | None = Field(None, description="Earliest event time (inclusive).")
    roles: Names | None = Field(None, description="user / assistant / system / tool / note")
    speakers: Names | None = Field(None, description="Speaker names (case-insensitive).")
    kinds: Names | None = Field(None, description="turn, note, fact, ...")
    stages: Names | None = Field(None, description="Stage ids or labels.")
    sessions: Names | None = Field(None, description="Session ids.")
    tags: Names | None = Field(None, description="Any of these tags.")
    exclude_ids: tuple[str, ...] = Field((), description="Memory ids never to return.")

    @field_validator("time_from")
    @classmethod
    def _range(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        end = as_utc(info.data.get("time_to"))
        start = as_utc(value)
        if start is not None and end is not None and start > end:
            raise ValueError("time_from is after time_to")
        return value


class RecallRequest(_Frozen):
    """One recall: the query, how many results, filters and options."""

    query: Query = Field(
        description="What to recall: a question or keywords (plain text; Lucene syntax is "
        f"treated as text). Not blank, at most {MAX_QUERY_CHARS} characters; one of control "
        "characters only finds nothing.",
        json_schema_extra={"pattern": NOT_BLANK_PATTERN},
    )
    k: int = Field(DEFAULT_K, strict=True, ge=MIN_K, le=MAX_K, description="Results wanted.")
    filters: RecallFilters = Field(default_factory=RecallFilters)
    include_superseded: bool = Field(
        False, strict=True, description="Also return superseded memories."
    )
    as_of: Timestamp | None = Field(
        None,
        description="Valid time: only memories true then (event time at or before it, not "
        "superseded by a version that had become true by then).",
    )
    known_at: Timestamp | None = Field(
        None,
        description="Recorded time: only what the server knew then (memories stored by "
        "then, supersessions recorded by then). Combines with as_of.",
    )
    explain: bool = Field(
        False, strict=True, description="Per-signal ranks and scores for every result."
    )
    deadline_ms: int | None = Field(
        None,
        strict=True,
        ge=1,
        le=MAX_DEADLINE_MS,
        description="Time budget: optional steps are skipped once it has passed and the "
        "response says complete=false.",
    )
    touch: bool = Field(
        True, strict=True, description="Count this read as an access (heat); false: no writes."
    )
    now: Timestamp | None = Field(
        None, description="Question time for 'last March', 'recently'... Default: now."
    )
    preset: PresetName = Field(
        DEFAULT_PRESET,
        description="Search configuration: 'full' (every step), 'fast' (full without late "
        "interaction) or 'dense' (vector similarity only, for debugging).",
    )
    oversample: int | None = Field(
        None,
        strict=True,
        ge=1,
        le=MAX_OVERSAMPLE,
        description="Candidates selection considers (a value below k counts as k; default "
        "from the configuration: k times selection.oversample, at least selection.min_pool).",
    )
    order: ResultOrder = Field(
        "relevance",
        description="Order of the results: 'relevance' (rank order), 'time', or 'auto': "
        "event-order questions ('what happened first...') in time order and everything else "
        "by rank. It never changes which memories are returned.",
    )
    session_novelty: float | None = Field(
        None,
        strict=True,
        ge=0.0,
        le=1.0,
        description="Selection charges a result whose conversation session already has a "
        "pick this much normalised relevance, once, so the results cover more sessions "
        "(default: the configuration's selection.session_novelty; 0: off). Off suits packing "
        "a token budget from the results, where a session's second-best turn is worth its "
        "room.",
    )

    @property
    def time_travel(self) -> bool:
        """Whether the recall reads the space at another time (``as_of`` / ``known_at``)."""
        return self.as_of is not None or self.known_at is not None

    @field_validator("k", "deadline_ms", "oversample", mode="before")
    @classmethod
    def _integral(cls, value: object) -> object:
        return integral(value)

    @field_validator("oversample")
    @classmethod
    def _at_least_k(cls, value: int | None, info: ValidationInfo) -> int | None:
        k = info.data.get("k")
        return max(value, k) if value is not None and k is not None else value


@dataclass(frozen=True)
class ChunkSpan:
    """A chunk of a long memory: its id, position among the memory's ``of`` chunks, and its
    span ``[start, end)`` of the memory's text."""

    id: str
    index: int
    start: int
    end: int
    of: int

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, "index": self.index, "start": self.start, "end": self.end}


@dataclass
class RecallHit:
    id: str
    content: str
    score: float
    session_id: str | None
    stage_id: str | None
    time: datetime | None
    speaker: str | None
    role: str | None
    #: per-signal ranks/scores, fused, then one entry per later step (``explain=True``)
    explain: dict[str, Any] | None = None
    #: only filled when the caller asked for embeddings
    embedding: np.ndarray | None = None
    #: a long memory: its number of chunks, and the ones to show for this query (its best
    #: matching chunks, best first, else its first); none for a memory within the window
    chunk_count: int = 0
    chunks: tuple[ChunkSpan, ...] = ()


@dataclass
class RecallResponse:
    results: list[RecallHit]
    intent: str
    abstain: bool
    abstain_reason: str | None
    complete: bool
    timings_ms: dict[str, float]
    candidates: int  # candidate-pool size
