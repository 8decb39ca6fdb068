"""What each API call sends and how its answer is read, shared by the sync and async clients
(they differ only in how they wait), plus the retry policy both apply."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from mnemograph.client import models
from mnemograph.client.routes import ROUTES

M = TypeVar("M")

#: Statuses a retry may cure: the server refused the call before doing anything.
RETRY_STATUSES = frozenset({429, 502, 503, 504})


#: Statuses whose body says whether the work may have been written (the shared contract).
COMMIT_UNKNOWN_STATUSES = frozenset({502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of refused calls (429, 502-504) and of connections that failed.

    The wait is the server's ``Retry-After`` when it sends one, else an exponential backoff
    with jitter; a ``Retry-After`` longer than ``max_wait_s`` is not waited out (the error is
    raised at once), and at most ``attempts`` tries are made in all.

    A 503 or 504 says in ``error.may_have_committed`` whether the work may have been written:
    a call that is not idempotent is retried only when it says ``false`` (a missing field, or
    a 502 from a proxy, counts as ``true``); idempotent calls (reads, ingest with explicit
    ids, PATCH, DELETE) are retried either way. A 429 is a refusal: always retried."""

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

    def wait_after(
        self,
        attempt: int,
        status: int,
        retry_after: float | None,
        *,
        idempotent: bool,
        may_have_committed: bool | None,
    ) -> float | None:
        """:meth:`wait` for an answer with ``status``, or None when resending could write
        twice: a non-idempotent call whose failure may have committed."""
        if status not in RETRY_STATUSES:
            return None
        if status in COMMIT_UNKNOWN_STATUSES and not idempotent and may_have_committed is not False:
            return None
        return self.wait(attempt, retry_after)


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
    idempotent: bool = False  # sending it twice is the same as once (retries: RetryPolicy)

    def read(self, data: Any) -> Any:
        if self.key is not None:
            return [self._one(item) for item in data[self.key]]
        return self._one(data)

    def _one(self, item: Any) -> Any:
        if isinstance(self.model, type) and issubclass(self.model, BaseModel):
            return self.model.model_validate(item)
        return item


def call(
    name: str,
    model: type[M],
    *,
    json: Any = None,
    params: Mapping[str, Any] | None = None,
    listed: str | None = None,
    idempotent: bool | None = None,
    **path: str,
) -> Call[M]:
    """The call of client method ``name``: its route (:data:`ROUTES`) with ``path`` filled
    in; ``listed``: the list field of the answer; ``idempotent`` overrides the route's (ingest:
    only with explicit ids)."""
    route = ROUTES[name]
    once = route.idempotent if idempotent is None else idempotent
    return Call(route.method, route.path(**path), model, json, params or {}, listed, once)


def paged(call: Call[M], skip: int, limit: int) -> Call[M]:
    """``call`` for one page."""
    params = {**call.params, "skip": skip, "limit": limit}
    return Call(call.method, call.path, call.model, call.json, params, call.key, call.idempotent)


def _all_have_ids(items: Sequence[Mapping[str, Any]]) -> bool:
    """Ingest is idempotent when every item names its id (a resend finds them stored)."""
    return bool(items) and all(item.get("id") for item in items)


class Endpoints:
    """The API's calls, built (not sent): the clients send them."""

    # -- health --------------------------------------------------------------------------
    @staticmethod
    def health() -> Call[dict[str, Any]]:
        return call("health", dict)

    @staticmethod
    def ready() -> Call[dict[str, Any]]:
        return call("ready", dict)

    # -- spaces --------------------------------------------------------------------------
    @staticmethod
    def list_spaces() -> Call[models.Space]:
        return call("list_spaces", models.Space, listed="spaces")

    @staticmethod
    def create_space(
        space: str, name: str | None, description: str | None, settings: Mapping[str, Any] | None
    ) -> Call[models.SpaceCreated]:
        payload = body(id=space, name=name, description=description, settings=settings)
        return call("create_space", models.SpaceCreated, json=payload)

    @staticmethod
    def update_space(
        space: str, name: str | None, description: str | None, settings: Mapping[str, Any] | None
    ) -> Call[models.Space]:
        payload = body(name=name, description=description, settings=settings)
        return call("update_space", models.Space, json=payload, space=space)

    @staticmethod
    def get_space(space: str) -> Call[models.Space]:
        return call("get_space", models.Space, space=space)

    @staticmethod
    def delete_space(space: str) -> Call[models.SpaceDeleted]:
        return call("delete_space", models.SpaceDeleted, space=space)

    # -- writing -------------------------------------------------------------------------
    @staticmethod
    def add_session(space: str, session: Mapping[str, Any]) -> Call[models.IngestResponse]:
        once = _all_have_ids(session.get("turns") or [])
        return call(
            "add_session", models.IngestResponse, json=session, idempotent=once, space=space
        )

    @staticmethod
    def add_memories(
        space: str, memories: Sequence[Mapping[str, Any]], options: Mapping[str, Any]
    ) -> Call[models.IngestResponse]:
        payload = body(memories=memories, **options)
        once = _all_have_ids(memories)
        return call(
            "add_memories", models.IngestResponse, json=payload, idempotent=once, space=space
        )

    @staticmethod
    def get_memory(space: str, memory_id: str) -> Call[models.MemoryDetail]:
        return call("get_memory", models.MemoryDetail, space=space, memory_id=memory_id)

    @staticmethod
    def delete_memory(space: str, memory_id: str) -> Call[models.MemoryDeleted]:
        return call("delete_memory", models.MemoryDeleted, space=space, memory_id=memory_id)

    # -- reading -------------------------------------------------------------------------
    @staticmethod
    def recall(
        space: str, query: str, k: int | None, options: Mapping[str, Any]
    ) -> Call[models.RecallOut]:
        payload = body(query=query, k=k, **options)
        return call("recall", models.RecallOut, json=payload, space=space)

    @staticmethod
    def context(
        space: str, query: str, context_window: int, options: Mapping[str, Any]
    ) -> Call[models.ContextOut]:
        payload = body(query=query, context_window=context_window, **options)
        return call("context", models.ContextOut, json=payload, space=space)

    # -- browsing ------------------------------------------------------------------------
    @staticmethod
    def list_entities(space: str, q: str | None) -> Call[models.Entity]:
        return call(
            "list_entities", models.Entity, params=body(q=q), listed="entities", space=space
        )

    @staticmethod
    def get_entity(space: str, key: str, limit: int | None) -> Call[models.EntityDetail]:
        params = body(limit=limit)
        return call("get_entity", models.EntityDetail, params=params, space=space, key=key)

    @staticmethod
    def list_stages(space: str) -> Call[models.StageSummary]:
        return call("list_stages", models.StageSummary, listed="stages", space=space)

    @staticmethod
    def get_stage(space: str, stage_id: str, limit: int | None) -> Call[models.StageDetail]:
        params = body(limit=limit)
        return call("get_stage", models.StageDetail, params=params, space=space, stage_id=stage_id)

    @staticmethod
    def stage_schema(space: str, stage_id: str, embedding: bool) -> Call[models.StageSchema]:
        params = {"embedding": str(embedding).lower()}
        return call(
            "stage_schema", models.StageSchema, params=params, space=space, stage_id=stage_id
        )

    @staticmethod
    def list_facts(
        space: str, category: str | None, speaker: str | None, include_superseded: bool
    ) -> Call[models.Fact]:
        params = body(category=category, speaker=speaker)
        if include_superseded:
            params["include_superseded"] = "true"
        return call("list_facts", models.Fact, params=params, listed="facts", space=space)

    # -- consolidation -------------------------------------------------------------------
    @staticmethod
    def run_job(space: str, job: str, dry_run: bool | None) -> Call[models.JobRun]:
        return call("run_job", models.JobRun, json=body(dry_run=dry_run), space=space, job=job)

    @staticmethod
    def list_jobs(space: str, job: str | None) -> Call[models.JobRun]:
        return call("list_jobs", models.JobRun, params=body(job=job), listed="runs", space=space)

    @staticmethod
    def get_job_run(space: str, run_id: str) -> Call[models.JobRun]:
        return call("get_job_run", models.JobRun, space=space, run_id=run_id)

    @staticmethod
    def list_merges(space: str, status: str | None) -> Call[models.Merge]:
        params = body(status=status)
        return call("list_merges", models.Merge, params=params, listed="merges", space=space)

    @staticmethod
    def get_merge(space: str, merge_id: str) -> Call[models.Merge]:
        return call("get_merge", models.Merge, space=space, merge_id=merge_id)

    @staticmethod
    def undo_merge(space: str, merge_id: str) -> Call[models.MergeUndone]:
        return call("undo_merge", models.MergeUndone, space=space, merge_id=merge_id)

    @staticmethod
    def supersede(
        space: str, memory_id: str, reason: str, content: str | None, by_memory_id: str | None
    ) -> Call[models.SupersedeResult]:
        payload = body(reason=reason, content=content, by_memory_id=by_memory_id)
        return call(
            "supersede", models.SupersedeResult, json=payload, space=space, memory_id=memory_id
        )

    @staticmethod
    def timeline(space: str, memory_id: str) -> Call[models.Timeline]:
        return call("timeline", models.Timeline, space=space, memory_id=memory_id)

    @staticmethod
    def list_supersessions(space: str, by: str | None) -> Call[models.Supersession]:
        params = body(by=by)
        listed = "supersessions"
        return call(
            "list_supersessions", models.Supersession, params=params, listed=listed, space=space
        )

    @staticmethod
    def get_supersession(space: str, supersession_id: str) -> Call[models.Supersession]:
        sid = supersession_id
        return call("get_supersession", models.Supersession, space=space, supersession_id=sid)

    @staticmethod
    def revert_supersession(space: str, supersession_id: str) -> Call[models.SupersessionReverted]:
        return call(
            "revert_supersession",
            models.SupersessionReverted,
            space=space,
            supersession_id=supersession_id,
        )

    # -- export and import ---------------------------------------------------------------
    @staticmethod
    def import_records(space: str, records: list[dict[str, Any]]) -> Call[models.ImportResult]:
        return call("import_records", models.ImportResult, json={"records": records}, space=space)

    @staticmethod
    def transfer_counts(space: str) -> Call[models.TransferCounts]:
        return call("transfer_counts", models.TransferCounts, space=space)

    @staticmethod
    def export(space: str, embeddings: bool) -> Call[dict[str, Any]]:
        """The space as JSON Lines (streamed: see the clients' ``export``)."""
        params = {"embeddings": str(embeddings).lower()}
        return call("export", dict, params=params, space=space)
