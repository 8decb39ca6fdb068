"""What flows through the recall steps: the request's plan, the candidate pool, the ranking
and everything read so far (:class:`RecallState`), plus the small value types it holds."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from pipelines.recall.intent import Intent
from pipelines.recall.request import ChunkSpan, RecallRequest
from pipelines.recall.time_expressions import TimeConstraint


class StepList(Protocol):
    """What the state asks of its preset (:class:`~pipelines.recall.presets.RecallPreset`,
    which imports the steps, which import this module: a protocol keeps that one way)."""

    def has(self, kind: str) -> bool: ...
    def needs_query_vector(self) -> bool: ...
    def needs_query_tokens(self) -> bool: ...


#: Vector ranking restricted to a time window the query names ("in May 2023").
SIGNAL_WINDOW = "window"
ACTIVE_STATUSES = ("active",)
WITH_SUPERSEDED_STATUSES = ("active", "superseded")

Row = dict[str, Any]
#: What a step says about one result (``explain=True``), by result id.
Explanations = dict[str, dict[str, Any]]


def statuses(request: RecallRequest) -> list[str]:
    """The memory statuses a request reads: superseded ones only when it asks for them, or
    reads another time (the validity step then keeps what was valid then)."""
    wide = request.include_superseded or request.time_travel
    return list(WITH_SUPERSEDED_STATUSES if wide else ACTIVE_STATUSES)


def ranked(scored: Sequence[tuple[float, str]]) -> list[str]:
    """Ids by score, best first; ties by id for determinism."""
    return [item_id for _, item_id in sorted(scored, key=lambda p: (-p[0], p[1]))]


def cosine_from_neo4j(score: float) -> float:
    """Neo4j reports cosine similarity normalised to [0, 1] as (1 + cos) / 2."""
    return 2.0 * score - 1.0


def session_scope(request: RecallRequest) -> bool:
    """Whether the session-level steps (session documents, session late interaction, session
    novelty in selection) apply to ``request``: not with a ``time_to`` filter (a session's
    document and token vectors hold what was said after it), a stage filter or a one-session
    filter (a stage is usually one session or a few, so the lift would be about the same
    for every candidate, and the round trip is not free), nor at another time (``as_of``,
    ``known_at``: for the same reason as ``time_to``)."""
    f = request.filters
    return (
        f.time_to is None
        and not request.time_travel
        and f.stages is None
        and (f.sessions is None or len(set(f.sessions)) > 1)
    )


@dataclass
class ChunkMatch:
    """A chunk some signals found, with each one's raw score (vector: Neo4j's normalised
    cosine; fulltext: BM25)."""

    span: ChunkSpan
    scores: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AbstentionDecision:
    """``confidence`` in [0.5, 1] is how far the evidence is from the decision boundary."""

    abstain: bool
    reason: str
    confidence: float
    evidence: float


@dataclass
class Candidate:
    """A memory some signal found, with the raw score of every ranking that found it."""

    id: str
    text: str
    speaker: str | None
    role: str | None
    kind: str | None
    session_id: str | None
    turn_index: int | None
    stage_id: str | None
    event_time: datetime | None
    ingested_at: datetime | None
    heat: float | None
    last_access: datetime | None
    #: whether its session has a turn by a speaker the query names (None: names none / no session)
    named_speaker_session: bool | None = None
    #: best raw score per ranking name ("vector", "window:0", "fulltext", "entity", ...)
    raw: dict[str, float] = field(default_factory=dict)
    #: a long memory: its number of chunks (0: it fits the embedder's window, no chunks)
    chunk_count: int = 0
    #: its chunks the query matched, best first, and the signals whose score came from them
    chunks: list[ChunkMatch] = field(default_factory=list)
    chunk_signals: list[str] = field(default_factory=list)
    #: its ingestion time in microseconds (the token cache's key; None: not read)
    stamp: int | None = None

    @property
    def passage(self) -> str:
        """What a reranker reads: a long memory's best matching chunk, else its text."""
        if self.chunks:
            span = self.chunks[0].span
            return self.text[span.start : span.end]
        return self.text


@dataclass(frozen=True)
class SpaceProfile:
    """What recall knows about a space before it searches: its size (active memories), the
    size of every space together (for the index's filter selectivity), its speakers and the
    names they go by, and its long memories (indexed as chunks), their chunks, and the
    chunks of every space."""

    size: int
    total: int
    speakers: tuple[str, ...]
    expires: float = 0.0
    long_memories: int = 0
    chunks: int = 0
    total_chunks: int = 0
    #: every name a query may use for a speaker → the speaker (:mod:`pipelines.recall.speakers`)
    forms: Mapping[str, str] = field(default_factory=dict)

    @property
    def selectivity(self) -> float:
        return self.size / self.total

    @property
    def chunk_selectivity(self) -> float:
        return self.chunks / max(1, self.total_chunks)


@dataclass(frozen=True)
class Plan:
    """Everything the understand step derived from the request."""

    query: str
    content: str  # the query without the speakers it names (what the content must match)
    vector_text: str  # what is embedded for the vector signal
    k: int
    pool: int  # candidates selection considers
    intent: Intent
    weights: dict[str, float]
    keywords: list[str]
    fulltext: str | None
    entity_keys: list[str]
    query_speakers: list[str]
    windows: list[TimeConstraint]
    now: datetime
    #: the query speaks of its asker in the first person (the user's own turns are favoured)
    first_person: bool = False
    #: the query asks for help with a task (standing instructions and preferences apply)
    task_like: bool = False
    #: identifier-like tokens of the query, looked up exactly (pipelines.recall.steps.identifiers)
    identifiers: tuple[str, ...] = ()


@dataclass
class RecallState:
    """One recall in progress. Steps read what earlier steps left and add their own part;
    the runner owns ``complete``, ``timings`` and ``explanations``."""

    request: RecallRequest
    preset: StepList
    profile: SpaceProfile
    #: the caller wants each result's embedding (the context assembler)
    with_embeddings: bool = False
    plan_: Plan | None = None
    #: the round trips the runner started, by read name: a call that waits for each
    reads: dict[str, Callable[[], Any]] = field(default_factory=dict)
    query_vector: np.ndarray | None = None
    query_tokens: np.ndarray | None = None
    pool: dict[str, Candidate] = field(default_factory=dict)
    #: the ranking, best first, and each candidate's score in it
    order: list[str] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    #: share of the best content matches said by a speaker the query names (None: names none)
    speaker_match: float | None = None
    #: memory embeddings and late-interaction token vectors read so far (None: none stored)
    embeddings: dict[str, np.ndarray] = field(default_factory=dict)
    tokens: dict[str, bytes | None] = field(default_factory=dict)
    #: the results, once a step chose them (selection, time order); else the head of ``order``
    results: list[str] | None = None
    abstention: AbstentionDecision | None = None
    #: memories holding a query identifier verbatim -> those identifiers (step identifiers)
    exact: dict[str, list[str]] = field(default_factory=dict)
    complete: bool = True
    explanations: Explanations = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def plan(self) -> Plan:
        if self.plan_ is None:
            raise RuntimeError("no plan yet: the understand step runs first")
        return self.plan_

    @property
    def explaining(self) -> bool:
        return self.request.explain

    @property
    def wants_embeddings(self) -> bool:
        """Whether memory embeddings are read: for selection, or for the caller."""
        return self.with_embeddings or self.preset.has("select")

    def final_ids(self) -> list[str]:
        """The ids the recall returns, in order."""
        return self.results if self.results is not None else self.order[: self.plan.k]

    def set_ranking(self, ranking: Sequence[tuple[str, float]]) -> None:
        """Replace the ranking (ids with scores, best first)."""
        self.order = [item_id for item_id, _ in ranking]
        self.scores = dict(ranking)
