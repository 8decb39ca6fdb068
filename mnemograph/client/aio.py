"""The asynchronous client: the same calls as :class:`~mnemograph.client.sync.Client`, awaited."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

import httpx

from mnemograph.client import bulk, models
from mnemograph.client.base import (
    ClientConfig,
    connection_failed,
    raise_for,
    read,
    refusal_wait,
    request_args,
    retryable,
)
from mnemograph.client.calls import RETRY_STATUSES, Call, Endpoints, RetryPolicy, paged
from mnemograph.client.transfer import merge_results

M = TypeVar("M")
E = Endpoints


class AsyncClient:
    """Mnemograph over HTTP, for asyncio. Use as an async context manager::

    async with AsyncClient("http://127.0.0.1:8000", api_key="...") as mg:
        await mg.recall("my-space", "what did we decide about the cache?")
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.config = ClientConfig(base_url, api_key, timeout=timeout, retry=retry, headers=headers)
        self._http = httpx.AsyncClient(
            base_url=self.config.base_url,
            headers=self.config.headers,
            timeout=timeout,
            transport=transport,
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    # -- sending -------------------------------------------------------------------------
    async def _send(self, call: Call[Any], stream: bool = False) -> httpx.Response:
        """The answer to ``call`` after the retries the policy allows (refusals, failed
        connections); any other answer is returned as it is."""
        attempt = 0
        while True:
            attempt += 1
            try:
                request = self._http.build_request(call.method, call.path, **request_args(call))
                response = await self._http.send(request, stream=stream)
            except httpx.TransportError as exc:
                wait = self.config.retry.wait(attempt, None) if retryable(exc, call) else None
                if wait is None:
                    raise connection_failed(self.config, exc) from exc
                await asyncio.sleep(wait)
                continue
            if response.status_code in RETRY_STATUSES:
                if stream and not call.idempotent:
                    await response.aread()
                wait = refusal_wait(self.config, call, attempt, response)
                if wait is not None:
                    await response.aclose()
                    await asyncio.sleep(wait)
                    continue
            return response

    async def _one(self, call: Call[M]) -> M:
        return cast(M, read(call, await self._send(call)))

    async def _many(self, call: Call[M]) -> list[M]:
        return cast(list[M], read(call, await self._send(call)))

    async def paginate(self, call: Call[M], page_size: int = 100) -> AsyncIterator[M]:
        """Every item of a listing, fetched page by page (``skip``/``limit``)."""
        skip = 0
        while True:
            page = await self._many(paged(call, skip, page_size))
            for item in page:
                yield item
            if len(page) < page_size:
                return
            skip += page_size

    # -- spaces --------------------------------------------------------------------------
    async def list_spaces(self, skip: int = 0, limit: int = 100) -> list[models.Space]:
        return await self._many(paged(E.list_spaces(), skip, limit))

    def iter_spaces(self, page_size: int = 100) -> AsyncIterator[models.Space]:
        return self.paginate(E.list_spaces(), page_size)

    async def create_space(
        self,
        space: str,
        *,
        name: str | None = None,
        description: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> models.SpaceCreated:
        return await self._one(E.create_space(space, name, description, settings))

    async def update_space(
        self,
        space: str,
        *,
        name: str | None = None,
        description: str | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> models.Space:
        """Change a space; ``settings`` is a merge patch (a ``None`` value removes that key)."""
        return await self._one(E.update_space(space, name, description, settings))

    async def get_space(self, space: str) -> models.Space:
        return await self._one(E.get_space(space))

    async def delete_space(self, space: str) -> models.SpaceDeleted:
        return await self._one(E.delete_space(space))

    # -- health --------------------------------------------------------------------------
    async def health(self) -> dict[str, Any]:
        """Liveness: ``{"status": "ok"}`` when the process answers."""
        return await self._one(E.health())

    async def ready(self) -> dict[str, Any]:
        """Readiness: Neo4j, GDS, indexes and models (raises :class:`Unavailable` while the
        server is not ready, after the retries)."""
        return await self._one(E.ready())

    # -- writing -------------------------------------------------------------------------
    async def add_session(self, space: str, session: Mapping[str, Any]) -> models.IngestResponse:
        """Store one conversation session (``session_id``, ``turns``, ...) in one transaction.
        With an ``id`` on every turn a resend is safe, so it is retried on a 503."""
        return await self._one(E.add_session(space, session))

    async def add_memories(
        self, space: str, memories: Sequence[Mapping[str, Any]], **options: Any
    ) -> models.IngestResponse:
        """Store free memories (``content``, ``kind``, ``tags``, ...); ``gate``/``force``."""
        return await self._one(E.add_memories(space, memories, options))

    async def get_memory(self, space: str, memory_id: str) -> models.MemoryDetail:
        """A memory with its entities, facts, stage, session, neighbours and supersessions."""
        return await self._one(E.get_memory(space, memory_id))

    async def delete_memory(self, space: str, memory_id: str) -> models.MemoryDeleted:
        return await self._one(E.delete_memory(space, memory_id))

    # -- large imports (mnemograph.client.bulk) ----------------------------------------
    async def limits(self) -> bulk.Limits:
        """The server's request limits (``GET /v1/limits``); the defaults when it has none."""
        response = await self._send(Call("GET", "/v1/limits", dict))
        try:
            payload = response.json()
        except ValueError:
            payload = None
        return bulk.server_limits(response.status_code, payload)

    async def ingest_sessions(
        self,
        space: str,
        sessions: Iterable[Mapping[str, Any]],
        *,
        resume: bulk.Resume | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> bulk.BulkResult:
        """Store sessions of any size: split into requests within the server's limits
        (:mod:`mnemograph.client.bulk`); idempotent, resumable (``resume``)."""
        return await bulk.ingest_sessions_async(
            self, space, sessions, resume=resume, progress=progress
        )

    async def ingest_memories(
        self,
        space: str,
        memories: Iterable[Mapping[str, Any]],
        *,
        resume: bulk.Resume | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> bulk.BulkResult:
        """Store any number of free memories, split like :meth:`ingest_sessions`."""
        return await bulk.ingest_memories_async(
            self, space, memories, resume=resume, progress=progress
        )

    # -- reading -------------------------------------------------------------------------
    async def recall(
        self, space: str, query: str, k: int | None = None, **options: Any
    ) -> models.RecallOut:
        """Ranked memories for ``query``; ``options`` are the other /recall fields."""
        return await self._one(E.recall(space, query, k, options))

    async def context(
        self, space: str, query: str, context_window: int, **options: Any
    ) -> models.ContextOut:
        """The context for ``query`` within ``context_window`` tokens (``prompt`` is ready
        to send; ``report`` says what was selected and cut)."""
        return await self._one(E.context(space, query, context_window, options))

    # -- browsing ------------------------------------------------------------------------
    async def list_entities(
        self, space: str, q: str | None = None, skip: int = 0, limit: int = 50
    ) -> list[models.Entity]:
        """One page of entities (``q``: a name fragment)."""
        return await self._many(paged(E.list_entities(space, q), skip, limit))

    def iter_entities(
        self, space: str, q: str | None = None, page_size: int = 100
    ) -> AsyncIterator[models.Entity]:
        return self.paginate(E.list_entities(space, q), page_size)

    async def get_entity(
        self, space: str, key: str, limit: int | None = None
    ) -> models.EntityDetail:
        """An entity by canonical key, with the memories that mention it (``limit``) and the
        entities it co-occurs with."""
        return await self._one(E.get_entity(space, key, limit))

    async def list_stages(
        self, space: str, skip: int = 0, limit: int = 100
    ) -> list[models.StageSummary]:
        """One page of stages, in time order, with memory counts."""
        return await self._many(paged(E.list_stages(space), skip, limit))

    def iter_stages(self, space: str, page_size: int = 100) -> AsyncIterator[models.StageSummary]:
        return self.paginate(E.list_stages(space), page_size)

    async def get_stage(
        self, space: str, stage_id: str, limit: int | None = None
    ) -> models.StageDetail:
        """A stage with its memories in time order (at most ``limit``) and its sessions."""
        return await self._one(E.get_stage(space, stage_id, limit))

    async def stage_schema(
        self, space: str, stage_id: str, embedding: bool = False
    ) -> models.StageSchema:
        """The stage's schema summary (built by the server now if missing or stale)."""
        return await self._one(E.stage_schema(space, stage_id, embedding))

    async def list_facts(
        self,
        space: str,
        category: str | None = None,
        *,
        speaker: str | None = None,
        include_superseded: bool = False,
        skip: int = 0,
        limit: int = 100,
    ) -> list[models.Fact]:
        """One page of facts, oldest first."""
        call = E.list_facts(space, category, speaker, include_superseded)
        return await self._many(paged(call, skip, limit))

    def iter_facts(
        self,
        space: str,
        category: str | None = None,
        page_size: int = 100,
        *,
        speaker: str | None = None,
        include_superseded: bool = False,
    ) -> AsyncIterator[models.Fact]:
        return self.paginate(E.list_facts(space, category, speaker, include_superseded), page_size)

    # -- consolidation -------------------------------------------------------------------
    async def run_job(self, space: str, job: str, dry_run: bool | None = None) -> models.JobRun:
        """Run one consolidation job now (:class:`Conflict` while another runner holds it)."""
        return await self._one(E.run_job(space, job, dry_run))

    async def list_jobs(
        self, space: str, job: str | None = None, skip: int = 0, limit: int = 50
    ) -> list[models.JobRun]:
        """One page of recorded runs, newest first."""
        return await self._many(paged(E.list_jobs(space, job), skip, limit))

    def iter_jobs(
        self, space: str, job: str | None = None, page_size: int = 50
    ) -> AsyncIterator[models.JobRun]:
        return self.paginate(E.list_jobs(space, job), page_size)

    async def get_job_run(self, space: str, run_id: str) -> models.JobRun:
        return await self._one(E.get_job_run(space, run_id))

    async def list_merges(
        self, space: str, status: str | None = None, skip: int = 0, limit: int = 50
    ) -> list[models.Merge]:
        """One page of merges (``status``: ``applied`` or ``undone``)."""
        return await self._many(paged(E.list_merges(space, status), skip, limit))

    def iter_merges(
        self, space: str, status: str | None = None, page_size: int = 50
    ) -> AsyncIterator[models.Merge]:
        return self.paginate(E.list_merges(space, status), page_size)

    async def get_merge(self, space: str, merge_id: str) -> models.Merge:
        return await self._one(E.get_merge(space, merge_id))

    async def undo_merge(self, space: str, merge_id: str) -> models.MergeUndone:
        """Undo a merge exactly (:class:`Conflict` when already undone)."""
        return await self._one(E.undo_merge(space, merge_id))

    async def supersede(
        self,
        space: str,
        memory_id: str,
        *,
        reason: str,
        content: str | None = None,
        by_memory_id: str | None = None,
    ) -> models.SupersedeResult:
        """Retire ``memory_id`` in favour of new ``content`` or of ``by_memory_id``."""
        return await self._one(E.supersede(space, memory_id, reason, content, by_memory_id))

    async def timeline(self, space: str, memory_id: str) -> models.Timeline:
        """The supersession chain ``memory_id`` belongs to, oldest first."""
        return await self._one(E.timeline(space, memory_id))

    async def list_supersessions(
        self, space: str, by: str | None = None, skip: int = 0, limit: int = 50
    ) -> list[models.Supersession]:
        """One page of supersessions (``by``: e.g. ``api`` or ``job:supersede``)."""
        return await self._many(paged(E.list_supersessions(space, by), skip, limit))

    def iter_supersessions(
        self, space: str, by: str | None = None, page_size: int = 50
    ) -> AsyncIterator[models.Supersession]:
        return self.paginate(E.list_supersessions(space, by), page_size)

    async def get_supersession(self, space: str, supersession_id: str) -> models.Supersession:
        return await self._one(E.get_supersession(space, supersession_id))

    async def revert_supersession(
        self, space: str, supersession_id: str
    ) -> models.SupersessionReverted:
        """Undo a supersession: the older memory and its facts get their prior status back."""
        return await self._one(E.revert_supersession(space, supersession_id))

    # -- export and import ---------------------------------------------------------------
    async def export(self, space: str, embeddings: bool = False) -> AsyncIterator[dict[str, Any]]:
        """The space's records (JSON Lines, streamed), header first and counts last."""
        response = await self._send(E.export(space, embeddings), stream=True)
        try:
            if not response.is_success:
                await response.aread()
                raise_for(response)
            async for line in response.aiter_lines():
                if line.strip():
                    yield cast(dict[str, Any], json.loads(line))
        finally:
            await response.aclose()

    async def import_records(
        self, space: str, records: Iterable[dict[str, Any]], batch: int = 500
    ) -> models.ImportResult:
        """Send exported records in batches (each one transaction); idempotent."""
        results: list[models.ImportResult] = []
        chunk: list[dict[str, Any]] = []
        for record in records:
            chunk.append(record)
            if len(chunk) >= batch:
                results.append(await self._one(E.import_records(space, chunk)))
                chunk = []
        if chunk:
            results.append(await self._one(E.import_records(space, chunk)))
        return merge_results(results)

    async def transfer_counts(self, space: str) -> models.TransferCounts:
        """What an export of the space holds, counted by the server (import verification)."""
        return await self._one(E.transfer_counts(space))
