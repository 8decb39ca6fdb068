"""The boundary between the harness and the system under test (SUT).

Guard against oracle leaks (../shared/notes/peers.md §6): the SUT receives

* the corpus: sessions and turns (:class:`CorpusSession`, built from the dataset without any
  question), with the session's stage label only where the *setting* defines one (the scale
  setting labels every session as its own stage; the default setting sends none);
* per question a :class:`QueryInput`, which has exactly two fields, ``text`` and
  ``question_time``, or a :class:`ContextInput` (the same plus the token budget).

Gold evidence, categories, answers and the ``unanswerable`` flag never cross this boundary: the
runner builds the inputs with :func:`query_input` / :func:`context_input`, collects raw outputs,
and only then hands them, with the dataset, to the scorer. ``tests/unit/test_bench_guards.py``
enforces this structurally.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from benchmarks.format import Question, Session


@dataclass(frozen=True, slots=True)
class QueryInput:
    """Everything the system under test learns about a question."""

    text: str
    question_time: datetime | None


@dataclass(frozen=True, slots=True)
class ContextInput:
    """A question for the context assembler: text, time and the token budget of the run."""

    text: str
    question_time: datetime | None
    budget_tokens: int


def query_input(q: Question) -> QueryInput:
    """The only way the runner turns a question into SUT input."""
    return QueryInput(text=q.text, question_time=q.question_time)


def context_input(q: Question, budget_tokens: int) -> ContextInput:
    return ContextInput(text=q.text, question_time=q.question_time, budget_tokens=budget_tokens)


@dataclass(frozen=True, slots=True)
class CorpusTurn:
    id: str
    role: str
    speaker: str
    content: str
    time: datetime | None = None


@dataclass(frozen=True, slots=True)
class CorpusSession:
    id: str
    turns: tuple[CorpusTurn, ...]
    started_at: datetime | None = None
    stage: str | None = None


def corpus_sessions(
    sessions: Sequence[Session],
    *,
    prefix: str = "",
    stage_from_session: bool = False,
    keep_stage_labels: bool = True,
) -> list[CorpusSession]:
    """Sessions as the SUT sees them. ``prefix`` is put before session and turn ids (scale
    setting: conversation id + ':'); ``stage_from_session`` labels each session as its own stage
    (scale setting); otherwise the dataset's own stage labels are passed when present."""
    out = []
    for s in sessions:
        stage = prefix + s.id if stage_from_session else (s.stage if keep_stage_labels else None)
        out.append(
            CorpusSession(
                id=prefix + s.id,
                started_at=s.started_at,
                stage=stage,
                turns=tuple(
                    CorpusTurn(prefix + t.id, t.role, t.speaker, t.content, t.time) for t in s.turns
                ),
            )
        )
    return out


@dataclass(frozen=True)
class Hit:
    """One retrieved memory as the scorer needs it."""

    id: str
    session_id: str | None
    content: str = ""
    score: float = 0.0
    speaker: str | None = None
    time: datetime | None = None


@dataclass
class Retrieval:
    hits: list[Hit]
    abstain: bool = False
    candidates: int | None = None
    latency_ms: float = 0.0
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: The query intent the system classified (for per-intent tables); None if it has none.
    intent: str | None = None


@dataclass(frozen=True, slots=True)
class ContextSpan:
    """A run of a context's text: its section, its length in characters and the memory it
    shows (a fact section's span: the turn the fact came from); ``None`` for framing (headers,
    group lines, data tags, banners) and for stage summaries, which show no one memory."""

    section: str
    chars: int
    memory_id: str | None = None
    record: bool = False
    """A memory's or a fact's own record (``memory_id`` None then: not attributable)."""


@dataclass
class AssembledContext:
    """What an assembler returned for one question: the memory ids it put in the context,
    and (for context precision, scored later) its text split into :class:`ContextSpan`."""

    memory_ids: list[str]
    used_tokens: int
    latency_ms: float = 0.0
    report: dict[str, Any] = field(default_factory=dict)
    spans: tuple[ContextSpan, ...] = ()
    prompt: str = ""
    """The whole prompt the reader would get (kept by the reader-judged benchmark only)."""


@dataclass
class IngestStats:
    turns: int
    seconds: float
    memories: int
    sessions: int
    entities: int = 0
    cooccurrences: int = 0
    facts: int = 0
    stages: int = 0


@runtime_checkable
class RecallSystem(Protocol):
    """What the runner drives. ``space`` is an opaque handle the SUT creates in ``prepare``."""

    def prepare(self, space: str, sessions: Sequence[CorpusSession]) -> IngestStats: ...

    def recall(
        self, space: str, query: QueryInput, config: str, k: int, order: str | None = None
    ) -> Retrieval:
        """``k`` hits for ``query`` in the system's default order, or ``order`` ("relevance":
        rank order, which a context packer needs, whatever the system's default)."""
        ...

    def pool_size(self, space: str) -> dict[str, int]: ...

    def drop(self, space: str) -> None: ...


@runtime_checkable
class ContextSystem(Protocol):
    """An assembler: (space, question, budget) → the memory ids in the assembled context."""

    name: str

    def assemble(self, space: str, query: ContextInput) -> AssembledContext: ...
