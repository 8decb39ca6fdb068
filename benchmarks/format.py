"""The generic conversation-benchmark format: one JSON document per dataset.

Any conversational-memory dataset converts into this shape and then runs through the same
harness (``python -m benchmarks run --dataset generic --path FILE``). LoCoMo goes through the same
path via :mod:`benchmarks.locomo`.

Structure (``?`` marks an optional field; :data:`SCHEMA` is the machine-readable version)::

    {
      "name": str,                                  # dataset name, used in result file names
      "meta"?: object,                              # free-form provenance (converter notes)
      "conversations": [{
        "id": str,                                  # unique in the dataset
        "speakers"?: [str],
        "sessions": [{
          "id": str,                                # unique in the conversation
          "started_at"?: ISO-8601 datetime,         # naive values are read as UTC
          "stage"?: str,                            # explicit stage label (project, topic)
          "turns": [{
            "id": str,                              # unique in the conversation: evidence ids
            "role": "user"|"assistant"|"system"|"tool"|"note",
            "speaker": str,
            "content": str,                         # non-empty
            "time"?: ISO-8601 datetime
          }]
        }],
        "questions": [{
          "id": str,                                # unique in the conversation
          "text": str,                              # non-empty
          "category": str,                          # free label, results are split by it
          "evidence": [turn id],                    # gold turns; must exist in the conversation
          "answer"?: str,
          "question_time"?: ISO-8601 datetime,      # "now" for the question
          "unanswerable"?: bool                     # default false; the system should abstain
        }]
      }]
    }

Rules the loader enforces, each failure naming the JSON path of the offending value: required
fields present and typed, no unknown fields (typos are errors, not silently ignored), unique ids,
at least one session per conversation and one turn per session, every evidence id resolving to a
turn of the same conversation. A question may have an empty evidence list: it is kept (abstention
is measured on it) but excluded from retrieval metrics, and the report counts such questions.

The classes are frozen dataclasses. The harness separates what the system under test may see
(sessions and turns; question text and time, see :mod:`benchmarks.sut`) from the gold fields
(``evidence``, ``category``, ``answer``, ``unanswerable``), which only the scorer reads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROLES: frozenset[str] = frozenset({"user", "assistant", "system", "tool", "note"})

#: JSON-schema-like description of the format (documentation; the loader below enforces it).
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name", "conversations"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "meta": {"type": "object", "description": "free-form provenance"},
        "conversations": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id", "sessions", "questions"],
                "additionalProperties": False,
                "properties": {
                    "id": {"type": "string", "minLength": 1, "unique": "dataset"},
                    "speakers": {"type": "array", "items": {"type": "string"}},
                    "sessions": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": ["id", "turns"],
                            "additionalProperties": False,
                            "properties": {
                                "id": {"type": "string", "minLength": 1, "unique": "conversation"},
                                "started_at": {"type": "string", "format": "date-time"},
                                "stage": {"type": "string", "minLength": 1},
                                "turns": {
                                    "type": "array",
                                    "minItems": 1,
                                    "items": {
                                        "type": "object",
                                        "required": ["id", "role", "speaker", "content"],
                                        "additionalProperties": False,
                                        "properties": {
                                            "id": {
                                                "type": "string",
                                                "minLength": 1,
                                                "unique": "conversation",
                                            },
                                            "role": {"enum": sorted(ROLES)},
                                            "speaker": {"type": "string"},
                                            "content": {"type": "string", "minLength": 1},
                                            "time": {"type": "string", "format": "date-time"},
                                        },
                                    },
                                },
                            },
                        },
                    },
                    "questions": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["id", "text", "category", "evidence"],
                            "additionalProperties": False,
                            "properties": {
                                "id": {"type": "string", "minLength": 1, "unique": "conversation"},
                                "text": {"type": "string", "minLength": 1},
                                "category": {"type": "string", "minLength": 1},
                                "evidence": {
                                    "type": "array",
                                    "items": {"type": "string", "ref": "turn id"},
                                },
                                "answer": {"type": ["string", "null"]},
                                "question_time": {"type": "string", "format": "date-time"},
                                "unanswerable": {"type": "boolean", "default": False},
                            },
                        },
                    },
                },
            },
        },
    },
}


class FormatError(ValueError):
    """The document does not follow the generic format; ``path`` locates the bad value."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


@dataclass(frozen=True)
class Turn:
    id: str
    role: str
    speaker: str
    content: str
    time: datetime | None = None


@dataclass(frozen=True)
class Session:
    id: str
    turns: tuple[Turn, ...]
    started_at: datetime | None = None
    stage: str | None = None


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    category: str
    evidence: tuple[str, ...]
    answer: str | None = None
    question_time: datetime | None = None
    unanswerable: bool = False


@dataclass(frozen=True)
class Conversation:
    id: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    speakers: tuple[str, ...] = ()

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)

    def session_of_turn(self) -> dict[str, str]:
        """Turn id -> id of the session that holds it (from the dataset, for scoring)."""
        return {t.id: s.id for s in self.sessions for t in s.turns}


@dataclass(frozen=True)
class Dataset:
    name: str
    conversations: tuple[Conversation, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def question_count(self) -> int:
        return sum(len(c.questions) for c in self.conversations)

    @property
    def turn_count(self) -> int:
        return sum(c.turn_count for c in self.conversations)

    @property
    def session_count(self) -> int:
        return sum(len(c.sessions) for c in self.conversations)


# ---------------------------------------------------------------------------------- parsing


def parse_time(value: Any, path: str) -> datetime:
    """ISO-8601 → aware datetime (naive values are taken as UTC)."""
    if not isinstance(value, str):
        raise FormatError(path, f"expected an ISO-8601 date-time string, got {_kind(value)}")
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise FormatError(path, f"not an ISO-8601 date-time: {value!r}") from None
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t


def format_time(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat()


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def _obj(value: Any, path: str, required: Sequence[str], allowed: Sequence[str]) -> dict:
    if not isinstance(value, dict):
        raise FormatError(path, f"expected an object, got {_kind(value)}")
    for key in required:
        if key not in value:
            raise FormatError(f"{path}.{key}", "required field is missing")
    unknown = sorted(set(value) - set(required) - set(allowed))
    if unknown:
        raise FormatError(
            f"{path}.{unknown[0]}",
            f"unknown field (allowed: {', '.join(sorted({*required, *allowed}))})",
        )
    return value


def _str(value: Any, path: str, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise FormatError(path, f"expected a string, got {_kind(value)}")
    if not empty and not value.strip():
        raise FormatError(path, "must not be empty")
    return value


def _list(value: Any, path: str, *, min_items: int = 0) -> list:
    if not isinstance(value, list):
        raise FormatError(path, f"expected an array, got {_kind(value)}")
    if len(value) < min_items:
        raise FormatError(path, f"needs at least {min_items} item(s)")
    return value


def _turn(raw: Any, path: str) -> Turn:
    d = _obj(raw, path, ("id", "role", "speaker", "content"), ("time",))
    role = _str(d["role"], f"{path}.role")
    if role not in ROLES:
        raise FormatError(f"{path}.role", f"{role!r} is not one of {sorted(ROLES)}")
    return Turn(
        id=_str(d["id"], f"{path}.id"),
        role=role,
        speaker=_str(d["speaker"], f"{path}.speaker", empty=True),
        content=_str(d["content"], f"{path}.content"),
        time=parse_time(d["time"], f"{path}.time") if d.get("time") is not None else None,
    )


def _session(raw: Any, path: str) -> Session:
    d = _obj(raw, path, ("id", "turns"), ("started_at", "stage"))
    turns = tuple(
        _turn(t, f"{path}.turns[{i}]")
        for i, t in enumerate(_list(d["turns"], f"{path}.turns", min_items=1))
    )
    stage = d.get("stage")
    return Session(
        id=_str(d["id"], f"{path}.id"),
        turns=turns,
        started_at=parse_time(d["started_at"], f"{path}.started_at")
        if d.get("started_at") is not None
        else None,
        stage=_str(stage, f"{path}.stage") if stage is not None else None,
    )


def _question(raw: Any, path: str) -> Question:
    d = _obj(
        raw,
        path,
        ("id", "text", "category", "evidence"),
        ("answer", "question_time", "unanswerable"),
    )
    evidence = _list(d["evidence"], f"{path}.evidence")
    ev = tuple(_str(e, f"{path}.evidence[{i}]") for i, e in enumerate(evidence))
    answer = d.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise FormatError(f"{path}.answer", f"expected a string or null, got {_kind(answer)}")
    unanswerable = d.get("unanswerable", False)
    if not isinstance(unanswerable, bool):
        raise FormatError(f"{path}.unanswerable", f"expected a boolean, got {_kind(unanswerable)}")
    category = d["category"]
    if isinstance(category, int) and not isinstance(category, bool):
        category = str(category)
    return Question(
        id=_str(d["id"], f"{path}.id"),
        text=_str(d["text"], f"{path}.text"),
        category=_str(category, f"{path}.category"),
        evidence=ev,
        answer=answer,
        question_time=parse_time(d["question_time"], f"{path}.question_time")
        if d.get("question_time") is not None
        else None,
        unanswerable=unanswerable,
    )


def _unique(ids: Sequence[tuple[str, str]], what: str) -> None:
    seen: dict[str, str] = {}
    for ident, path in ids:
        if ident in seen:
            raise FormatError(path, f"duplicate {what} id {ident!r} (first at {seen[ident]})")
        seen[ident] = path


def _conversation(raw: Any, path: str) -> Conversation:
    d = _obj(raw, path, ("id", "sessions", "questions"), ("speakers",))
    cid = _str(d["id"], f"{path}.id")
    sessions = tuple(
        _session(s, f"{path}.sessions[{i}]")
        for i, s in enumerate(_list(d["sessions"], f"{path}.sessions", min_items=1))
    )
    questions = tuple(
        _question(q, f"{path}.questions[{i}]")
        for i, q in enumerate(_list(d["questions"], f"{path}.questions"))
    )
    _unique([(s.id, f"{path}.sessions[{i}].id") for i, s in enumerate(sessions)], "session")
    _unique(
        [
            (t.id, f"{path}.sessions[{i}].turns[{j}].id")
            for i, s in enumerate(sessions)
            for j, t in enumerate(s.turns)
        ],
        "turn",
    )
    _unique([(q.id, f"{path}.questions[{i}].id") for i, q in enumerate(questions)], "question")
    turn_ids = {t.id for s in sessions for t in s.turns}
    for i, q in enumerate(questions):
        for j, e in enumerate(q.evidence):
            if e not in turn_ids:
                raise FormatError(
                    f"{path}.questions[{i}].evidence[{j}]",
                    f"evidence id {e!r} is not a turn of conversation {cid!r}",
                )
    speakers = d.get("speakers") or []
    spk = tuple(
        _str(s, f"{path}.speakers[{i}]") for i, s in enumerate(_list(speakers, f"{path}.speakers"))
    )
    return Conversation(id=cid, sessions=sessions, questions=questions, speakers=spk)


def parse_dataset(raw: Any) -> Dataset:
    """Validate a decoded JSON document and build the :class:`Dataset` (raises FormatError)."""
    d = _obj(raw, "$", ("name", "conversations"), ("meta",))
    meta = d.get("meta") or {}
    if not isinstance(meta, dict):
        raise FormatError("$.meta", f"expected an object, got {_kind(meta)}")
    convs = tuple(
        _conversation(c, f"$.conversations[{i}]")
        for i, c in enumerate(_list(d["conversations"], "$.conversations", min_items=1))
    )
    _unique([(c.id, f"$.conversations[{i}].id") for i, c in enumerate(convs)], "conversation")
    return Dataset(name=_str(d["name"], "$.name"), conversations=convs, meta=meta)


def load_dataset(path: str | Path) -> Dataset:
    """Read and validate a generic-format JSON file."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no benchmark dataset at {p}")
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise FormatError("$", f"{p} is not valid JSON: {exc}") from None
    return parse_dataset(raw)


def dataset_to_json(ds: Dataset) -> dict[str, Any]:
    """The inverse of :func:`parse_dataset` (optional fields left out when unset)."""

    def turn(t: Turn) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": t.id,
            "role": t.role,
            "speaker": t.speaker,
            "content": t.content,
        }
        if t.time is not None:
            out["time"] = format_time(t.time)
        return out

    def session(s: Session) -> dict[str, Any]:
        out: dict[str, Any] = {"id": s.id}
        if s.started_at is not None:
            out["started_at"] = format_time(s.started_at)
        if s.stage is not None:
            out["stage"] = s.stage
        out["turns"] = [turn(t) for t in s.turns]
        return out

    def question(q: Question) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": q.id,
            "text": q.text,
            "category": q.category,
            "evidence": list(q.evidence),
        }
        if q.answer is not None:
            out["answer"] = q.answer
        if q.question_time is not None:
            out["question_time"] = format_time(q.question_time)
        if q.unanswerable:
            out["unanswerable"] = True
        return out

    doc: dict[str, Any] = {"name": ds.name}
    if ds.meta:
        doc["meta"] = dict(ds.meta)
    doc["conversations"] = [
        {
            "id": c.id,
            **({"speakers": list(c.speakers)} if c.speakers else {}),
            "sessions": [session(s) for s in c.sessions],
            "questions": [question(q) for q in c.questions],
        }
        for c in ds.conversations
    ]
    return doc
