"""The API's response models that the server and the SDK share: pure data (pydantic only),
so the server (``app.schemas``) declares its responses with them and the SDK
(:mod:`mnemograph.client`) reads responses into the very same classes, without importing the
server. Responses whose shape comes from the domain (``pipelines``: the context report, jobs,
facts, entities, supersessions) stay declared by the SDK and checked against the server's
OpenAPI schema by the contract test.

Unknown fields are ignored: an older SDK reads a newer server's responses.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ImportResult",
    "IngestResponse",
    "ItemDecision",
    "RecallOut",
    "RecallResult",
    "SchemaModel",
    "Space",
    "SpaceCounts",
    "SpaceCreated",
    "SpaceDeleted",
    "SpaceList",
    "TransferCounts",
]


class SchemaModel(BaseModel):
    """Read from dicts or, on the server, from the domain's result objects as they are."""

    model_config = ConfigDict(from_attributes=True)


class SpaceCounts(SchemaModel):
    memories: int
    sessions: int
    entities: int
    stages: int
    facts: int
    schemas: int
    job_runs: int
    chunks: int = Field(0, description="Chunks of the memories longer than the embedder's window.")


class Space(SchemaModel):
    id: str
    name: str | None = None
    description: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    created_at: str | None = None
    counts: SpaceCounts | None = None


class SpaceCreated(Space):
    created: bool


class SpaceList(SchemaModel):
    spaces: list[Space]


class SpaceDeleted(SchemaModel):
    id: str
    deleted: SpaceCounts


class ItemDecision(SchemaModel):
    index: int
    id: str
    decision: Literal["stored", "merged", "rejected", "unchanged"]
    reason: str
    signals: dict[str, Any] = Field(default_factory=dict)
    merge_target: str | None = None
    entities: list[str] = Field(default_factory=list)
    facts: int = 0


class IngestResponse(SchemaModel):
    """On the server, read from the write path's ``IngestResult`` as it is."""

    session_id: str | None = None
    stage_ids: list[str]
    memory_ids: list[str]
    items: list[ItemDecision]
    counts: dict[str, int]


class RecallResult(SchemaModel):
    id: str
    content: str
    score: float = Field(
        description="A relative ranking score, higher is better, comparable only between the "
        "results of one response (not across queries, spaces or presets; not a probability "
        "or a similarity). With presets `full` and `fast` it is the last rescoring step's "
        "value: a score min-max normalised to [0, 1] plus a session lift of at most 0.3 "
        "(`session_late_interaction.weight`, else `session_documents.weight`), so within "
        "[0, 1.3]; below the late-interaction window, without a session lift, it can be "
        "negative. With `dense` it is the weighted reciprocal-rank-fusion sum (small: about "
        "1/21 for the first rank of one signal of weight 1). Results are in the returned "
        "order, which selection, replies, standing slots, exact identifier matches and time "
        "order may make differ from score order."
    )
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
        "penalty and session-novelty penalty), `replies_to` (a reply brought after the "
        "summary request it answers: that result's id), `standing_slot` (true: the turn of the "
        "best standing instruction or preference, given a place selection had not left it); "
        "for a long memory (indexed as chunks), "
        "`chunks`: how many it has (`of`), the signals its best chunk decided (`signals`) and "
        "the chunks that matched (`matched`: id, index, start and end of the span of the "
        "memory's text, scores), best first.",
    )


class RecallOut(SchemaModel):
    """On the server, the domain's ``RecallResponse`` as JSON."""

    results: list[RecallResult]
    intent: str
    abstain: bool
    abstain_reason: str | None = None
    complete: bool
    timings_ms: dict[str, float]
    candidates: int


class TransferCounts(SchemaModel):
    """What an export holds (or an import found), by node label and relationship type."""

    nodes: dict[str, int]
    relationships: dict[str, int]


class ImportResult(SchemaModel):
    """What one import batch wrote, by node label and relationship type."""

    nodes: dict[str, int]
    relationships: dict[str, int]
