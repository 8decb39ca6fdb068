"""What each API call sends and how its answer is read, shared by the sync and async clients
(they differ only in how they wait), plus the retry policy both apply."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from pydantic import BaseModel

from mnemograph.client import models

M = TypeVar("M")

#: Statuses a retry may cure: the server refused the call before doing anything.
RETRY_STATUSES = frozenset({429, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of refused calls (429, 502-504) and of connections that failed.

    The wait is the server's ``Retry-After`` when it sends one, else an exponential backoff
    with jitter; a ``Retry-After`` longer than ``max_wait_s`` is not waited out (the error is
    raised at once), and at most ``attempts`` tries are made in all."""

    attempts: int = 4
    backoff_s: float = 0.25
    max_wait_s: float = 30.0

    def wait(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait before try ``attempt + 1`` (``attempt`` counts from 1), or None:
        give up."""
        if attempt >= self.attempts:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_wait_s else None
        base = self.backoff_s * (2 ** (attempt - 1))
        return float(min(self.max_wait_s, base * (0.5 + random.random())))


NO_RETRY = RetryPolicy(attempts=1)


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds: delta-seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def seg(value: str) -> str:
    """One path segment, escaped (memory ids may hold ':' or spaces)."""
    return quote(value, safe="")


def body(**fields: Any) -> dict[str, Any]:
    """A JSON body without the fields left unset (the server applies its defaults)."""
    return {k: v for k, v in fields.items() if v is not None}


@dataclass(frozen=True)
class Call(Generic[M]):
    """One request and the model its answer is read into (``key``: the list field of a
    wrapped answer such as ``{"spaces": [...]}``)."""

    method: str
    path: str
    model: type[M]
    json: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)
    key: str | None = None

    def read(self, data: Any) -> Any:
        if self.key is not None:
            return [self._one(item) for item in data[self.key]]
        return self._one(data)

    def _one(self, item: Any) -> Any:
        if isinstance(self.model, type) and issubclass(self.model, BaseModel):
            return self.model.model_validate(item)
        return item


def space_path(space: str, *rest: str) -> str:
    return "/".join(["/v1/spaces", seg(space), *rest])


def paged(call: Call[M], skip: int, limit: int) -> Call[M]:
    """``call`` for one page."""
    params = {**call.params, "skip": skip, "limit": limit}
    return Call(call.method, call.path, call.model, call.json, params, call.key)


class Endpoints:
    """The API's calls, built (not sent): the clients send them."""

    @staticmethod
    def list_spaces() -> Call[models.Space]:
        return Call("GET", "/v1/spaces", models.Space, key="spaces")

    @staticmethod
    def create_space(
        space: str, name: str | None, description: str | None, settings: Mapping[str, Any] | None
    ) -> Call[models.SpaceCreated]:
        payload = body(id=space, name=name, description=description, settings=settings)
        return Call("POST", "/v1/spaces", models.SpaceCreated, json=payload)

    @staticmethod
    def update_space(
        space: str, name: str | None, description: str | None, settings: Mapping[str, Any] | None
    ) -> Call[models.Space]:
        payload = body(name=name, description=description, settings=settings)
        return Call("PATCH", space_path(space), models.Space, json=payload)

    @staticmethod
    def get_space(space: str) -> Call[models.Space]:
        return Call("GET", space_path(space), models.Space)

    @staticmethod
    def delete_space(space: str) -> Call[models.SpaceDeleted]:
        return Call("DELETE", space_path(space), models.SpaceDeleted)

    @staticmethod
    def add_session(space: str, session: Mapping[str, Any]) -> Call[models.IngestResponse]:
        return Call("POST", space_path(space, "sessions"), models.IngestResponse, json=session)

    @staticmethod
    def add_memories(
        space: str, memories: Sequence[Mapping[str, Any]], options: Mapping[str, Any]
    ) -> Call[models.IngestResponse]:
        payload = body(memories=memories, **options)
        return Call("POST", space_path(space, "memories"), models.IngestResponse, json=payload)

    @staticmethod
    def get_memory(space: str, memory_id: str) -> Call[dict[str, Any]]:
        return Call("GET", space_path(space, "memories", seg(memory_id)), dict)

    @staticmethod
    def delete_memory(space: str, memory_id: str) -> Call[models.MemoryDeleted]:
        path = space_path(space, "memories", seg(memory_id))
        return Call("DELETE", path, models.MemoryDeleted)

    @staticmethod
    def recall(
        space: str, query: str, k: int | None, options: Mapping[str, Any]
    ) -> Call[models.RecallOut]:
        payload = body(query=query, k=k, **options)
        return Call("POST", space_path(space, "recall"), models.RecallOut, json=payload)

    @staticmethod
    def context(
        space: str, query: str, context_window: int, options: Mapping[str, Any]
    ) -> Call[models.ContextOut]:
        payload = body(query=query, context_window=context_window, **options)
        return Call("POST", space_path(space, "context"), models.ContextOut, json=payload)

    @staticmethod
    def supersede(
        space: str, memory_id: str, reason: str, content: str | None, by_memory_id: str | None
    ) -> Call[models.SupersedeResult]:
        path = space_path(space, "memories", seg(memory_id), "supersede")
        payload = body(reason=reason, content=content, by_memory_id=by_memory_id)
        return Call("POST", path, models.SupersedeResult, json=payload)

    @staticmethod
    def run_job(space: str, job: str, dry_run: bool | None) -> Call[models.JobRun]:
        payload = body(dry_run=dry_run)
        return Call("POST", space_path(space, "jobs", seg(job)), models.JobRun, json=payload)

    @staticmethod
    def list_jobs(space: str, job: str | None) -> Call[models.JobRun]:
        params = body(job=job)
        return Call("GET", space_path(space, "jobs"), models.JobRun, params=params, key="runs")

    @staticmethod
    def list_facts(space: str, category: str | None) -> Call[models.Fact]:
        params = body(category=category)
        return Call("GET", space_path(space, "facts"), models.Fact, params=params, key="facts")

    @staticmethod
    def list_entities(space: str, q: str | None) -> Call[models.Entity]:
        path = space_path(space, "entities")
        return Call("GET", path, models.Entity, params=body(q=q), key="entities")

    @staticmethod
    def import_records(space: str, records: list[dict[str, Any]]) -> Call[models.ImportResult]:
        path = space_path(space, "import")
        return Call("POST", path, models.ImportResult, json={"records": records})

    @staticmethod
    def transfer_counts(space: str) -> Call[models.TransferCounts]:
        return Call("GET", space_path(space, "export", "counts"), models.TransferCounts)

    @staticmethod
    def export(space: str, embeddings: bool) -> Call[dict[str, Any]]:
        """The space as JSON Lines (streamed: see the clients' ``export``)."""
        params = {"embeddings": str(embeddings).lower()}
        return Call("GET", space_path(space, "export"), dict, params=params)
