"""Any size goes in: a large import split into requests that fit the server's limits.

:func:`pack` is the one splitter (pure): it cuts an ordered run of sessions' turns into
requests under the most items, content characters, body bytes and embedding inputs a request
may hold (:class:`Limits`, read from ``GET /v1/limits`` by :func:`limits_of`, with safe
defaults when a server does not expose them). A session longer than one request is sent as
several requests with the same ``session_id``; its turns get stable ids first
(:func:`with_ids`: ``<session_id>#<position>``, the server's own default for a session sent
whole), so a re-run finds them ``unchanged`` and an interrupted import is resumed by sending
it again. A 422 naming the embedding-input limit (an estimate that was short) splits that
request where the server says it stops fitting, or in half, a bounded number of times.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from mnemograph.client.errors import InvalidInput, Unavailable

__all__ = [
    "DEFAULT_LIMITS",
    "BulkResult",
    "Cost",
    "Limits",
    "Part",
    "Resume",
    "estimate_inputs",
    "ingest_memories",
    "ingest_memories_async",
    "ingest_sessions",
    "ingest_sessions_async",
    "limits_of",
    "memory_requests",
    "pack",
    "requests_of",
    "turn_cost",
    "with_ids",
]

#: Bytes of a request body besides its turns (session_id, started_at, stage, options, JSON).
PART_OVERHEAD_BYTES = 1_024
#: A chunk holds at least this many characters per word piece of the window (English averages
#: about 4; 2 is conservative for code, numbers and punctuation).
CHARS_PER_PIECE = 2
#: Word pieces the model's markers and a speaker prefix take from the window, at most.
PREFIX_PIECES = 16
#: Most times one request is split again after a 422 about its embedding inputs.
MAX_RESPLITS = 12
#: Most retries of one request answered 503 (every turn has an id: a resend is safe).
MAX_UNAVAILABLE_RETRIES = 5


class Client(Protocol):
    """What the bulk helper uses of :class:`mnemograph.client.Client`."""

    def limits(self) -> Limits: ...
    def add_session(self, space: str, session: Mapping[str, Any]) -> Any: ...
    def add_memories(self, space: str, memories: Sequence[Mapping[str, Any]]) -> Any: ...


class AsyncClient(Protocol):
    """What the bulk helper uses of :class:`mnemograph.client.AsyncClient`."""

    async def limits(self) -> Limits: ...
    async def add_session(self, space: str, session: Mapping[str, Any]) -> Any: ...
    async def add_memories(self, space: str, memories: Sequence[Mapping[str, Any]]) -> Any: ...


@dataclass(frozen=True)
class Limits:
    """What one ingest request may hold (``GET /v1/limits``; the defaults are the server's)."""

    max_items_per_request: int = 1_000
    max_content_chars: int = 4_000_000
    max_request_chars: int = 8_000_000
    max_request_bytes: int = 64 * 1024 * 1024
    max_embedding_inputs: int = 4_096
    embedding_window: int = 256
    ingest_deadline_seconds: float = 600.0

    def budget(self) -> Limits:
        """The limits with a tenth to spare on the estimated ones (bytes, inputs)."""
        return replace(
            self,
            max_request_bytes=max(1, self.max_request_bytes * 9 // 10),
            max_embedding_inputs=max(1, self.max_embedding_inputs * 9 // 10),
        )


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Cost:
    """What one turn adds to a request."""

    chars: int
    bytes: int
    inputs: int


@dataclass(frozen=True)
class Part:
    """Turns ``[start, end)`` of session ``session`` (an index into the packed sessions)."""

    session: int
    start: int
    end: int


def estimate_inputs(content: str, speaker: str | None, window: int) -> int:
    """Texts the model reads for one memory, estimated from characters (never below the
    server's count in practice): one when ``speaker: content`` has no more characters than the
    window has word pieces (the server's own rule), else one per chunk of at least
    ``CHARS_PER_PIECE`` characters per piece of the window."""
    prefix = len(speaker) + 2 if speaker else 0
    room = max(1, window - PREFIX_PIECES)
    if len(content) + prefix <= room:
        return 1
    return max(1, math.ceil(len(content) / (room * CHARS_PER_PIECE)))


def turn_cost(turn: Mapping[str, Any], window: int) -> Cost:
    content = str(turn.get("content", ""))
    speaker = turn.get("speaker")
    body = len(json.dumps(turn, ensure_ascii=False, default=str).encode("utf-8")) + 2
    return Cost(len(content), body, estimate_inputs(content, speaker, window))


def pack(
    sessions: Sequence[Sequence[Cost]],
    limits: Limits,
    *,
    multi: bool,
    part_items: int | None = None,
) -> list[list[Part]]:
    """Requests, in order, each a list of consecutive parts of sessions (``multi=False``: one
    part per request, the HTTP route's shape), every one within ``limits`` (items, content
    characters, body bytes, embedding inputs) and no part longer than ``part_items`` turns;
    a turn over a limit alone is a request of its own (the server names it). Every turn is in
    exactly one part, in order; a session is in a request at most once."""
    most = part_items or limits.max_items_per_request
    out: list[list[Part]] = []
    batch: list[Part] = []
    items = chars = size = inputs = 0

    def close() -> None:
        nonlocal batch, items, chars, size, inputs
        if batch:
            out.append(batch)
        batch, items, chars, size, inputs = [], 0, 0, 0, 0

    for s, costs in enumerate(sessions):
        if batch and not multi:
            close()
        start = 0
        for i, c in enumerate(costs):
            extra = PART_OVERHEAD_BYTES if i == start else 0  # a part's session header
            fits = (
                items + 1 <= limits.max_items_per_request
                and i - start + 1 <= most
                and chars + c.chars <= limits.max_request_chars
                and size + c.bytes + extra <= limits.max_request_bytes
                and inputs + c.inputs <= limits.max_embedding_inputs
            )
            if items and not fits:
                if i > start:
                    batch.append(Part(s, start, i))
                close()
                start, extra = i, PART_OVERHEAD_BYTES
            items, chars, inputs = items + 1, chars + c.chars, inputs + c.inputs
            size += c.bytes + extra
        if len(costs) > start:
            batch.append(Part(s, start, len(costs)))
    close()
    return out


def with_ids(session: Mapping[str, Any]) -> dict[str, Any]:
    """The session with every turn's id set: a given id stays; a missing one is
    ``<session_id>#<position>`` (the server's default for the whole session sent at once)."""
    sid = str(session["session_id"])
    turns = [
        dict(t) if t.get("id") else {**t, "id": f"{sid}#{i}"}
        for i, t in enumerate(session["turns"])
    ]
    return {**session, "turns": turns}


def requests_of(
    sessions: Sequence[Mapping[str, Any]], limits: Limits = DEFAULT_LIMITS
) -> list[dict[str, Any]]:
    """The POST /sessions bodies of ``sessions``, in order: every turn with an id, a session
    longer than one request in several with its ``session_id``."""
    full = [with_ids(s) for s in sessions]
    budget = limits.budget()
    costs = [[turn_cost(t, budget.embedding_window) for t in s["turns"]] for s in full]
    bodies = []
    for request in pack(costs, budget, multi=False):
        (part,) = request
        session = full[part.session]
        bodies.append({**session, "turns": session["turns"][part.start : part.end]})
    return bodies


def limits_of(payload: Mapping[str, Any] | None) -> Limits:
    """Limits from a ``GET /v1/limits`` answer; a missing field keeps its default."""
    if not payload:
        return DEFAULT_LIMITS
    known = {k: payload[k] for k in Limits.__dataclass_fields__ if k in payload}
    return replace(DEFAULT_LIMITS, **known)


def fingerprint(space: str, body: Mapping[str, Any], key: str = "turns") -> str:
    """One request's identity for resuming: the space, session and its items' ids and text."""
    h = hashlib.sha256(f"{space}\0{key}\0{body.get('session_id', '')}".encode())
    for t in body[key]:
        h.update(f"\0{t.get('id', '')}\0{t.get('content', '')}".encode())
    return h.hexdigest()[:32]


@dataclass
class Resume:
    """Requests already acknowledged, one fingerprint a line in ``path`` (appended as each is
    acknowledged, so an interruption loses at most the request in flight)."""

    path: Path
    done: set[str] = field(default_factory=set)

    @classmethod
    def open(cls, path: str | Path) -> Resume:
        p = Path(path)
        done = set(p.read_text(encoding="utf-8").split()) if p.exists() else set()
        return cls(p, done)

    def add(self, key: str) -> None:
        self.done.add(key)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(key + "\n")


@dataclass
class BulkResult:
    """What an import did: requests sent (and skipped as acknowledged before), decisions."""

    requests: int = 0
    skipped: int = 0
    resplits: int = 0
    decisions: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, answer: Any) -> None:
        self.requests += 1
        for item in answer.items:
            self.decisions[item.decision] = self.decisions.get(item.decision, 0) + 1
        for key, value in answer.counts.items():
            self.counts[key] = self.counts.get(key, 0) + value


_WHERE = re.compile(r"^(?:turns|memories)\.(\d+)$")


def _halves(body: dict[str, Any], key: str, exc: InvalidInput) -> list[dict[str, Any]] | None:
    """A request refused for its embedding inputs, cut where the server says the items stop
    fitting (or in half); None when it is one item, or one item alone is too much (the
    server names its ``.content``), or it was refused for something else."""
    items = body[key]
    if "texts embedded" not in exc.message or len(items) < 2:
        return None
    if (exc.field or "").endswith(".content"):
        return None
    m = _WHERE.match(exc.field or "")
    cut = int(m.group(1)) if m and 0 < int(m.group(1)) < len(items) else len(items) // 2
    return [{**body, key: items[:cut]}, {**body, key: items[cut:]}]


def _wait(exc: Unavailable, attempt: int) -> float | None:
    if attempt >= MAX_UNAVAILABLE_RETRIES:
        return None
    return min(60.0, exc.retry_after if exc.retry_after is not None else 2.0**attempt)


class _Run:
    """The bookkeeping of one import: what to send next, what was acknowledged."""

    def __init__(
        self,
        space: str,
        bodies: list[dict[str, Any]],
        key: str,
        resume: Resume | None,
        progress: Callable[[int], None] | None,
    ) -> None:
        self.space, self.key, self.resume, self.progress = space, key, resume, progress
        self.pending: list[dict[str, Any]] = list(reversed(bodies))
        self.budget = MAX_RESPLITS * max(1, len(bodies))
        self.result = BulkResult()

    def next(self) -> dict[str, Any] | None:
        """The next body to send (None: done), skipping those acknowledged before."""
        while self.pending:
            body = self.pending.pop()
            if (
                self.resume is not None
                and fingerprint(self.space, body, self.key) in self.resume.done
            ):
                self.result.skipped += 1
                self._advance(body)
                continue
            return body
        return None

    def refused(self, body: dict[str, Any], exc: InvalidInput) -> None:
        parts = _halves(body, self.key, exc)
        if parts is None or self.result.resplits >= self.budget:
            raise exc
        self.result.resplits += 1
        self.pending.extend(reversed(parts))

    def done(self, body: dict[str, Any], answer: Any) -> None:
        self.result.add(answer)
        if self.resume is not None:
            self.resume.add(fingerprint(self.space, body, self.key))
        self._advance(body)

    def _advance(self, body: dict[str, Any]) -> None:
        if self.progress:
            self.progress(len(body[self.key]))


def _post(client: Client, space: str, key: str, body: dict[str, Any]) -> Any:
    if key == "turns":
        return client.add_session(space, body)
    return client.add_memories(space, body["memories"])


async def _post_async(client: AsyncClient, space: str, key: str, body: dict[str, Any]) -> Any:
    if key == "turns":
        return await client.add_session(space, body)
    return await client.add_memories(space, body["memories"])


def _sync_run(client: Client, run: _Run) -> BulkResult:
    while (body := run.next()) is not None:
        attempt = 0
        while True:
            try:
                run.done(body, _post(client, run.space, run.key, body))
                break
            except InvalidInput as exc:
                run.refused(body, exc)
                break
            except Unavailable as exc:
                attempt += 1
                wait = _wait(exc, attempt)
                if wait is None:
                    raise
                time.sleep(wait)
    return run.result


async def _async_run(client: AsyncClient, run: _Run) -> BulkResult:
    import asyncio

    while (body := run.next()) is not None:
        attempt = 0
        while True:
            try:
                run.done(body, await _post_async(client, run.space, run.key, body))
                break
            except InvalidInput as exc:
                run.refused(body, exc)
                break
            except Unavailable as exc:
                attempt += 1
                wait = _wait(exc, attempt)
                if wait is None:
                    raise
                await asyncio.sleep(wait)
    return run.result


def memory_requests(
    memories: Sequence[Mapping[str, Any]], limits: Limits = DEFAULT_LIMITS
) -> list[dict[str, Any]]:
    """The POST /memories bodies of ``memories``, in order (a memory without an id gets the
    server's content-derived one, so a re-run is ``unchanged`` too)."""
    budget = limits.budget()
    items = [dict(m) for m in memories]
    costs = [turn_cost(m, budget.embedding_window) for m in items]
    return [{"memories": items[p.start : p.end]} for (p,) in pack([costs], budget, multi=False)]


def ingest_sessions(
    client: Client,
    space: str,
    sessions: Iterable[Mapping[str, Any]],
    *,
    limits: Limits | None = None,
    resume: Resume | None = None,
    progress: Callable[[int], None] | None = None,
) -> BulkResult:
    """Store ``sessions`` (each ``session_id``, ``turns``, ...) in as many requests as the
    server's limits need; ``progress`` is called with the turns of each acknowledged (or
    skipped) request. Idempotent: running it again stores nothing twice."""
    bodies = requests_of(list(sessions), limits or client.limits())
    return _sync_run(client, _Run(space, bodies, "turns", resume, progress))


def ingest_memories(
    client: Client,
    space: str,
    memories: Iterable[Mapping[str, Any]],
    *,
    limits: Limits | None = None,
    resume: Resume | None = None,
    progress: Callable[[int], None] | None = None,
) -> BulkResult:
    """Store free memories in as many requests as the server's limits need (as
    :func:`ingest_sessions`)."""
    bodies = memory_requests(list(memories), limits or client.limits())
    return _sync_run(client, _Run(space, bodies, "memories", resume, progress))


async def ingest_sessions_async(
    client: AsyncClient,
    space: str,
    sessions: Iterable[Mapping[str, Any]],
    *,
    limits: Limits | None = None,
    resume: Resume | None = None,
    progress: Callable[[int], None] | None = None,
) -> BulkResult:
    """:func:`ingest_sessions` for the async client."""
    bodies = requests_of(list(sessions), limits or await client.limits())
    return await _async_run(client, _Run(space, bodies, "turns", resume, progress))


async def ingest_memories_async(
    client: AsyncClient,
    space: str,
    memories: Iterable[Mapping[str, Any]],
    *,
    limits: Limits | None = None,
    resume: Resume | None = None,
    progress: Callable[[int], None] | None = None,
) -> BulkResult:
    """:func:`ingest_memories` for the async client."""
    bodies = memory_requests(list(memories), limits or await client.limits())
    return await _async_run(client, _Run(space, bodies, "memories", resume, progress))


def server_limits(status: int, payload: Any) -> Limits:
    """The limits a ``GET /v1/limits`` answer gives; the defaults when the server has no such
    route (404) or answers something else."""
    if status == 200 and isinstance(payload, dict):
        try:
            return limits_of(payload)
        except TypeError:
            return DEFAULT_LIMITS
    return DEFAULT_LIMITS
