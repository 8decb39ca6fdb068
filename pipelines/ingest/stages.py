"""Stage detection: group sessions (or single turns) into stages, i.e. topical work segments.

A *stage* is a contiguous segment of a conversation history: a work session, a debugging
episode, a design discussion. Detection is pluggable through the :class:`StageDetector`
protocol; the write path calls :func:`assign_stages` for each batch of new sessions together
with the last stage already stored for the same scope.

Detectors shipped here:

* :class:`ExplicitStageDetector` — the stage is an explicit label (project, topic, plan id):
  key ``"label:" + casefolded, whitespace-collapsed label``; unlabeled sessions get the
  ``fallback_label`` stage.
* :class:`TimeGapStageDetector` — consecutive sessions belong to the same stage while the gap
  between a session's start and the running stage end is at most ``gap`` (4 h default); a
  longer gap starts a new stage. Key: ``"gap:" + UTC start of the stage's first session`` as
  ``YYYYMMDDTHHMMSSZ`` (microseconds appended only when non-zero). Keys derived from time,
  not from a counter, are independent of how the stream is batched: feeding sessions one
  batch at a time (with the previous last stage) yields the same keys as one big batch.
* :class:`CompositeStageDetector` — explicit labels where present, time gaps otherwise.

A later community-based detector (e.g. GDS Louvain over the entity graph) fits the same
protocol: construct it with a precomputed ``session_id -> community`` map and return keys such
as ``"community:<id>"`` with ``kind = "community"``; nothing else changes.

Times: naive datetimes are taken as UTC; a turn is a session with ``end = start``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

from pipelines.ingest.config import DEFAULT_INGEST_CONFIG, StageConfig

__all__ = [
    "CompositeStageDetector",
    "ExplicitStageDetector",
    "SessionSpan",
    "StageAssignment",
    "StageDetector",
    "StageState",
    "TimeGapStageDetector",
    "assign_stages",
    "default_stage_detector",
    "stage_spans",
    "time_stage_key",
]


def _as_utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@dataclass(frozen=True, slots=True)
class SessionSpan:
    """A session (or a single turn) to place in a stage."""

    session_id: str
    start: datetime
    end: datetime | None = None
    """Defaults to ``start`` (a single turn)."""
    label: str | None = None
    """Explicit stage label (project, topic, plan id), if the client sent one."""

    def __post_init__(self) -> None:
        start = _as_utc(self.start)
        end = start if self.end is None else _as_utc(self.end)
        if end < start:
            raise ValueError(f"session {self.session_id!r} ends before it starts")
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", end)

    @property
    def stop(self) -> datetime:
        """``end`` as a non-optional value (always set after construction)."""
        assert self.end is not None
        return self.end


@dataclass(frozen=True, slots=True)
class StageState:
    """A stored stage: its key, time extent and the kind of detector that made it."""

    key: str
    start: datetime
    end: datetime
    kind: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "start", _as_utc(self.start))
        object.__setattr__(self, "end", _as_utc(self.end))


@dataclass(frozen=True, slots=True)
class StageAssignment:
    """The stage of one session and why."""

    session_id: str
    stage_key: str
    kind: str
    continued: bool
    """True when the session joined the stage that existed before this call."""
    reason: str


@runtime_checkable
class StageDetector(Protocol):
    """Assigns stages to a batch of sessions.

    ``assign`` receives the sessions sorted by (start, end, session_id) and the last stored
    stage of the scope (or ``None``), and returns exactly one assignment per session, in the
    same order. It must be pure and deterministic.
    """

    @property
    def kind(self) -> str:
        """The detector's kind, stored on the stages it makes (read-only)."""
        ...

    def assign(
        self, sessions: Sequence[SessionSpan], last_stage: StageState | None
    ) -> list[StageAssignment]: ...


def _label_key(label: str) -> str:
    return "label:" + " ".join(label.split()).casefold()


@dataclass(frozen=True)
class ExplicitStageDetector:
    """Stage = explicit label (see module docstring)."""

    fallback_label: str = DEFAULT_INGEST_CONFIG.stages.fallback_label
    kind: str = field(default="label", init=False)

    def assign(
        self, sessions: Sequence[SessionSpan], last_stage: StageState | None
    ) -> list[StageAssignment]:
        assignments: list[StageAssignment] = []
        for session in sessions:
            label = session.label.strip() if session.label else ""
            key = _label_key(label or self.fallback_label)
            reason = f"label {label!r}" if label else "no label: fallback stage"
            continued = last_stage is not None and last_stage.key == key
            assignments.append(
                StageAssignment(session.session_id, key, self.kind, continued, reason)
            )
        return assignments


def time_stage_key(start: datetime) -> str:
    """Key of a time-gap stage whose first session starts at ``start`` (UTC, second precision,
    microseconds appended when non-zero)."""
    moment = _as_utc(start)
    key = moment.strftime("gap:%Y%m%dT%H%M%S")
    if moment.microsecond:
        key += f".{moment.microsecond:06d}"
    return key + "Z"


@dataclass(frozen=True)
class TimeGapStageDetector:
    """Stage boundaries at gaps longer than ``gap`` (see module docstring).

    Continuation: the running stage is the stored ``last_stage`` when it is a time-gap stage;
    a session joins it when ``session.start - stage.end <= gap`` (overlapping sessions always
    join) and the stage end becomes ``max(stage.end, session.end)``. Sessions that start
    before the stored last stage (late backfill) are grouped among themselves only; existing
    boundaries are not rewritten (a full re-run over the history is a consolidation job).
    """

    gap: timedelta = DEFAULT_INGEST_CONFIG.stages.time_gap
    kind: str = field(default="gap", init=False)

    def __post_init__(self) -> None:
        if self.gap < timedelta(0):
            raise ValueError("gap must not be negative")

    def assign(
        self, sessions: Sequence[SessionSpan], last_stage: StageState | None
    ) -> list[StageAssignment]:
        existing = last_stage if last_stage is not None and last_stage.kind == self.kind else None
        backfill = [s for s in sessions if existing is not None and s.start < existing.start]
        regular = [s for s in sessions if existing is None or s.start >= existing.start]
        by_id = {a.session_id: a for a in self._run(backfill, None)}
        by_id.update((a.session_id, a) for a in self._run(regular, existing))
        return [by_id[s.session_id] for s in sessions]

    def _run(
        self, sessions: Sequence[SessionSpan], existing: StageState | None
    ) -> list[StageAssignment]:
        out: list[StageAssignment] = []
        key = existing.key if existing else None
        end = existing.end if existing else None
        from_existing = existing is not None
        for session in sessions:
            if key is None or end is None:
                reason = "first session"
            elif session.start - end <= self.gap:
                delta = max(session.start - end, timedelta(0))
                out.append(
                    StageAssignment(
                        session.session_id,
                        key,
                        self.kind,
                        from_existing,
                        f"gap {delta} <= {self.gap}",
                    )
                )
                end = max(end, session.stop)
                continue
            else:
                reason = f"gap {session.start - end} > {self.gap}"
            key, end, from_existing = time_stage_key(session.start), session.stop, False
            out.append(StageAssignment(session.session_id, key, self.kind, False, reason))
        return out


@dataclass(frozen=True)
class CompositeStageDetector:
    """Explicit label when a session has one, ``fallback`` (time gaps by default) otherwise.

    The stored last stage is handed to whichever detector made it (matched by ``kind``).
    """

    primary: StageDetector = field(default_factory=ExplicitStageDetector)
    fallback: StageDetector = field(default_factory=TimeGapStageDetector)
    kind: str = field(default="composite", init=False)

    def assign(
        self, sessions: Sequence[SessionSpan], last_stage: StageState | None
    ) -> list[StageAssignment]:
        labeled = [s for s in sessions if s.label and s.label.strip()]
        unlabeled = [s for s in sessions if not (s.label and s.label.strip())]

        def last_for(detector: StageDetector) -> StageState | None:
            return (
                last_stage if last_stage is not None and last_stage.kind == detector.kind else None
            )

        by_id = {a.session_id: a for a in self.primary.assign(labeled, last_for(self.primary))}
        by_id.update(
            (a.session_id, a) for a in self.fallback.assign(unlabeled, last_for(self.fallback))
        )
        return [by_id[s.session_id] for s in sessions]


def default_stage_detector(config: StageConfig | None = None) -> StageDetector:
    """The recommended production detector: labels where present, time gaps otherwise."""
    cfg = config or DEFAULT_INGEST_CONFIG.stages
    return CompositeStageDetector(
        ExplicitStageDetector(cfg.fallback_label), TimeGapStageDetector(cfg.time_gap)
    )


def assign_stages(
    sessions: Sequence[SessionSpan],
    existing_last_stage: StageState | None = None,
    detector: StageDetector | None = None,
) -> list[StageAssignment]:
    """Assign a stage to every session; results are in the caller's input order.

    Sessions are sorted by (start, end, session_id) before the detector runs, so the result
    does not depend on input order. Raises ``ValueError`` on duplicate session ids or when a
    detector returns a wrong set of assignments (nothing is dropped silently).
    """
    ids = [s.session_id for s in sessions]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate session ids")
    if not sessions:
        return []
    chosen = detector or default_stage_detector()
    ordered = sorted(sessions, key=lambda s: (s.start, s.stop, s.session_id))
    assignments = chosen.assign(ordered, existing_last_stage)
    if [a.session_id for a in assignments] != [s.session_id for s in ordered]:
        raise ValueError(f"detector {chosen!r} did not return one assignment per session")
    by_id = {a.session_id: a for a in assignments}
    return [by_id[i] for i in ids]


def stage_spans(
    sessions: Sequence[SessionSpan],
    assignments: Sequence[StageAssignment],
    existing_last_stage: StageState | None = None,
) -> dict[str, StageState]:
    """Time extent of every stage touched by ``assignments`` (merged with the stored stage).

    Use it to upsert stage nodes: start = earliest session start, end = latest session end,
    widened by ``existing_last_stage`` when a session continued it.
    """
    by_id = {s.session_id: s for s in sessions}
    spans: dict[str, StageState] = {}
    if existing_last_stage is not None and any(
        a.stage_key == existing_last_stage.key for a in assignments
    ):
        spans[existing_last_stage.key] = existing_last_stage
    for assignment in assignments:
        session = by_id[assignment.session_id]
        current = spans.get(assignment.stage_key)
        if current is None:
            spans[assignment.stage_key] = StageState(
                assignment.stage_key, session.start, session.stop, assignment.kind
            )
        else:
            spans[assignment.stage_key] = StageState(
                current.key,
                min(current.start, session.start),
                max(current.end, session.stop),
                current.kind,
            )
    return spans
