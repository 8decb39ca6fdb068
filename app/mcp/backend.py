"""What the MCP tools call: a :class:`Backend` answers in plain, compact dicts. Two exist:
:class:`ServicesBackend` (the engine's services in this process: ``/mcp`` in the API, or
``mnemograph mcp`` with no API running) and :class:`ClientBackend` (a running API over HTTP
with the SDK, for ``mnemograph mcp``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio.to_thread

from app.mcp.results import Backend, Json, context_result
from app.schemas.memories import MemoriesCreate, SessionCreate
from app.services import Services
from mnemograph.client import AsyncClient
from pipelines import browse, spaces
from pipelines.assemble.request import ContextRequest
from pipelines.consolidate import history, supersessions
from pipelines.ingest.deadline import Deadline
from pipelines.prompt.blocks import neutralize_controls
from pipelines.recall.request import RecallRequest

__all__ = ["Backend", "ClientBackend", "Json", "ServicesBackend"]


class ServicesBackend:
    """The app's services, called in worker threads (they block on Neo4j)."""

    def __init__(self, services: Callable[[], Services]) -> None:
        self._services = services

    @property
    def s(self) -> Services:
        return self._services()

    async def list_spaces(self, allowed: frozenset[str] | None) -> list[Json]:
        rows = await anyio.to_thread.run_sync(
            lambda: spaces.list_spaces(self.s.engine.store, allowed, 0, 1000)
        )
        return [{"id": r["id"], "name": r.get("name"), "description": r.get("description")}
                for r in rows]  # fmt: skip

    async def add_session(self, space: str, session: Json) -> Json:
        body = SessionCreate.model_validate(session)
        deadline = Deadline.after(self.s.settings.ingest_deadline_seconds)
        result = await anyio.to_thread.run_sync(
            lambda: self.s.ingestor.ingest_session(
                space, body.to_session(), body.options(), deadline
            )
        )
        return _ingested(result.memory_ids, result.items, result.counts)

    async def add_memories(self, space: str, memories: list[Json]) -> Json:
        body = MemoriesCreate.model_validate({"memories": memories})
        deadline = Deadline.after(self.s.settings.ingest_deadline_seconds)
        result = await anyio.to_thread.run_sync(
            lambda: self.s.ingestor.add_memories(
                space, body.to_memories(), body.options(), deadline
            )
        )
        return _ingested(result.memory_ids, result.items, result.counts)

    async def recall(self, space: str, query: str, k: int) -> Json:
        request = RecallRequest(query=query, k=k)
        out = await anyio.to_thread.run_sync(lambda: self.s.recaller.recall(space, request))
        hits = [_hit(h) for h in out.results]
        return {"results": hits, "abstain": out.abstain, "abstain_reason": out.abstain_reason}

    async def context(self, space: str, query: str, context_window: int) -> Json:
        request = ContextRequest(query=query, context_window=context_window)
        out = await anyio.to_thread.run_sync(lambda: self.s.assembler.assemble(space, request))
        return context_result(out.prompt, out.included_ids, out.report.as_dict())

    async def forget(self, space: str, memory_id: str) -> Json:
        deleted = await anyio.to_thread.run_sync(
            lambda: browse.delete_memory(
                self.s.engine.store, space, memory_id, history.keep_history
            )
        )
        return {"id": memory_id, "deleted": deleted.model_dump()}

    async def correct(self, space: str, memory_id: str, content: str, reason: str) -> Json:
        request = supersessions.SupersedeRequest(content=content, reason=reason)
        out = await anyio.to_thread.run_sync(
            lambda: supersessions.supersede_memory(
                self.s.engine, self.s.ingestor, space, memory_id, request
            )
        )
        return {"superseded": out.older, "by": out.newer, "reason": out.reason}


class ClientBackend:
    """A running Mnemograph server, through the SDK."""

    def __init__(self, client: AsyncClient) -> None:
        self.c = client

    async def list_spaces(self, allowed: frozenset[str] | None) -> list[Json]:
        return [{"id": s.id, "name": s.name, "description": s.description}
                async for s in self.c.iter_spaces()]  # fmt: skip

    async def add_session(self, space: str, session: Json) -> Json:
        out = await self.c.add_session(space, session)
        return _ingested(out.memory_ids, out.items, out.counts)

    async def add_memories(self, space: str, memories: list[Json]) -> Json:
        out = await self.c.add_memories(space, memories)
        return _ingested(out.memory_ids, out.items, out.counts)

    async def recall(self, space: str, query: str, k: int) -> Json:
        out = await self.c.recall(space, query, k=k)
        hits = [_hit(h) for h in out.results]
        return {"results": hits, "abstain": out.abstain, "abstain_reason": out.abstain_reason}

    async def context(self, space: str, query: str, context_window: int) -> Json:
        out = await self.c.context(space, query, context_window)
        return context_result(out.prompt, out.included_ids, out.report)

    async def forget(self, space: str, memory_id: str) -> Json:
        out = await self.c.delete_memory(space, memory_id)
        return {"id": memory_id, "deleted": out.deleted.model_dump()}

    async def correct(self, space: str, memory_id: str, content: str, reason: str) -> Json:
        out = await self.c.supersede(space, memory_id, reason=reason, content=content)
        return {"superseded": out.older, "by": out.newer, "reason": out.reason}


def _hit(h: Any) -> Json:
    """One recall hit for a model: stored text with its control and bidirectional characters
    shown as ``&#x..;`` entities (as in /context prompts), never passed through."""
    return {
        "id": h.id,
        "content": neutralize_controls(h.content),
        "time": h.time.isoformat() if h.time else None,
        "speaker": neutralize_controls(h.speaker) if h.speaker else h.speaker,
        "session_id": h.session_id,
        "score": round(h.score, 4),
    }


def _ingested(ids: list[str], items: list[Any], counts: dict[str, int]) -> Json:
    decisions = [{"id": it.id, "decision": it.decision, "reason": it.reason} for it in items]
    return {"memory_ids": ids, "counts": counts, "items": decisions}
