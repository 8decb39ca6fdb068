"""Every entry of the SDK's route table (mnemograph.client.routes) sent to a live server, by
the sync and the async client: each client method is called, each request is recorded by a
real HTTP transport and matched to the server's OpenAPI templates, so the table the unit
test walks (tests/unit/test_sdk_coverage.py) cannot claim a route the SDK does not send."""

from __future__ import annotations

import asyncio
import inspect
import re
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest

from mnemograph.client import AsyncClient, Client, Conflict
from mnemograph.client.routes import ROUTES
from tests.integration.test_consolidate_jobs import BIOGRAPHY, T0

Use = Callable[..., Awaitable[Any]]


class Recording(httpx.HTTPTransport):
    """httpx's own transport, noting each request's method, path and answer's status."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, str, int]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        self.seen.append(
            (request.method, request.url.raw_path.decode().split("?")[0], response.status_code)
        )
        return response


class AsyncRecording(httpx.AsyncHTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, str, int]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        self.seen.append(
            (request.method, request.url.raw_path.decode().split("?")[0], response.status_code)
        )
        return response


def sessions() -> list[dict[str, Any]]:
    """The consolidation tests' biography (a near-duplicate to merge, changed preferences)."""
    out = []
    for sid, day, turns in BIOGRAPHY:
        out.append(
            {
                "session_id": sid,
                "turns": [
                    {
                        "role": role,
                        "speaker": speaker,
                        "content": text,
                        "time": (T0 + timedelta(days=day, minutes=i)).isoformat(),
                    }
                    for i, (role, speaker, text) in enumerate(turns)
                ],
            }
        )
    return out


async def scenario(use: Use, space: str, copy: str) -> None:
    """Every client method once at least, each answer checked."""
    assert (await use("health"))["status"] == "ok"
    assert (await use("ready"))["ready"] is True
    assert (await use("limits")).max_embedding_inputs > 0
    assert (await use("create_space", space, name="routes")).created
    assert space in [s.id for s in await use("iter_spaces", page_size=1000)]
    assert isinstance(await use("list_spaces", limit=5), list)
    assert (await use("update_space", space, description="all routes")).description
    for session in sessions():
        assert (await use("add_session", space, session)).counts["memories"] >= 1
    note = await use("add_memories", space, [{"id": "note-1", "content": "Ann likes tea."}])
    assert note.memory_ids == ["note-1"]
    assert (await use("get_space", space)).counts.memories == 9
    detail = await use("get_memory", space, "s1#0")
    assert detail.memory.session_id == "s1" and detail.next and detail.next.id == "s1#1"
    hits = await use("recall", space, "Where does Ann live?", k=3)
    assert hits.results
    ctx = await use("context", space, "Where does Ann live?", context_window=2000)
    assert ctx.prompt

    entities = await use("list_entities", space, limit=100)
    assert [e.key for e in entities] == [
        e.key for e in await use("iter_entities", space, page_size=1)
    ]
    paris = next(e for e in entities if e.name == "Paris")
    assert any(m.id == "s1#0" for m in (await use("get_entity", space, paris.key)).mentions)
    stages = await use("list_stages", space)
    assert stages and [s.id for s in stages] == [
        s.id for s in await use("iter_stages", space, page_size=1)
    ]
    stage = await use("get_stage", space, stages[0].id)
    assert stage.memory_count == stages[0].memories and stage.memories
    built = await use("run_job", space, "schemas")  # reads never build a schema
    assert built.status == "ok"
    schema = await use("stage_schema", space, stages[0].id)
    assert schema.stage_id == stages[0].id and schema.summary and schema.embedding is None
    facts = await use("list_facts", space, include_superseded=True)
    assert [f.id for f in facts] == [
        f.id for f in await use("iter_facts", space, page_size=2, include_superseded=True)
    ]

    merged = await use("run_job", space, "merge", dry_run=False)
    assert merged.counts["merged"] == 1
    run = await use("get_job_run", space, merged.id)
    assert run.id == merged.id and run.job == "merge"
    assert [r.id for r in await use("list_jobs", space)] == [merged.id, built.id]
    assert [r.id for r in await use("iter_jobs", space, job="merge", page_size=1)] == [merged.id]
    [merge] = await use("list_merges", space, status="applied")
    assert [m.id for m in await use("iter_merges", space, page_size=1)] == [merge.id]
    got = await use("get_merge", space, merge.id)
    assert (got.canonical, got.duplicates) == ("s1#3", ["s2#2"])
    assert (await use("undo_merge", space, merge.id)).status == "undone"

    fixed = await use(
        "supersede", space, "s1#2", reason="fixed", content="My favourite colour is red."
    )
    chain = await use("timeline", space, fixed.newer)
    assert [c.id for c in chain.chain] == ["s1#2", fixed.newer]
    assert chain.chain[1].supersedes[0].reason == "fixed"
    assert [s.id for s in await use("list_supersessions", space, by="api")] == [fixed.id]
    assert [s.id for s in await use("iter_supersessions", space, page_size=1)] == [fixed.id]
    assert (await use("get_supersession", space, fixed.id)).older == "s1#2"
    reverted = await use("revert_supersession", space, fixed.id)
    assert reverted.reverted and reverted.older_status == "active"
    assert (await use("delete_memory", space, "note-1")).deleted.memories == 1

    records = await use("export", space)
    assert records[0]["type"] == "header" and records[-1]["type"] == "counts"
    counts = await use("transfer_counts", space)
    assert counts.nodes == records[-1]["nodes"]
    written = await use("import_records", copy, records)
    assert written.nodes
    assert (await use("delete_space", copy)).deleted.memories >= 8
    assert (await use("delete_space", space)).deleted.memories >= 8


def matcher() -> list[tuple[str, str, re.Pattern[str]]]:
    """(method, template, regex) of the table's routes, the longest templates first."""
    routes = sorted({(r.method, r.template) for r in ROUTES.values()}, key=lambda r: -len(r[1]))
    return [(m, t, re.compile("^" + re.sub(r"\{\w+\}", "[^/]+", t) + "$")) for m, t in routes]


def check(used: list[str], seen: list[tuple[str, str, int]]) -> None:
    assert sorted(set(ROUTES) - set(used)) == []
    errors = [s for s in seen if s[2] >= 400]
    assert errors == []
    hit = set()
    for method, path, _ in seen:
        route = next(((m, t) for m, t, rx in matcher() if m == method and rx.match(path)), None)
        assert route is not None, f"{method} {path} matches no route of the table"
        hit.add(route)
    assert {(r.method, r.template) for r in ROUTES.values()} - hit == set()


async def collect(result: Any) -> Any:
    if inspect.isawaitable(result):
        return await result
    if inspect.isasyncgen(result):
        return [item async for item in result]
    if inspect.isgenerator(result):
        return list(result)
    return result


def test_every_route_of_the_table_with_the_sync_client(live):
    space, copy = f"rt-{uuid.uuid4().hex[:8]}", f"rt-copy-{uuid.uuid4().hex[:8]}"
    transport = Recording()
    used: list[str] = []
    with Client(live.url, transport=transport) as mg:

        async def use(method: str, /, *args: Any, **kwargs: Any) -> Any:
            used.append(method)
            return await collect(getattr(mg, method)(*args, **kwargs))

        asyncio.run(scenario(use, space, copy))
    check(used, transport.seen)


def test_every_route_of_the_table_with_the_async_client(live):
    space, copy = f"rta-{uuid.uuid4().hex[:8]}", f"rta-copy-{uuid.uuid4().hex[:8]}"
    transport = AsyncRecording()
    used: list[str] = []

    async def main() -> None:
        async with AsyncClient(live.url, transport=transport) as mg:

            async def use(method: str, /, *args: Any, **kwargs: Any) -> Any:
                used.append(method)
                return await collect(getattr(mg, method)(*args, **kwargs))

            await scenario(use, space, copy)

    asyncio.run(main())
    check(used, transport.seen)


def test_undoing_a_merge_twice_is_a_conflict(live):
    """An error of a new call reaches the caller as its class (409 here), not as a retry."""
    space = f"rtc-{uuid.uuid4().hex[:8]}"
    with Client(live.url) as mg:
        mg.create_space(space)
        try:
            for session in sessions():
                mg.add_session(space, session)
            mg.run_job(space, "merge", dry_run=False)
            [merge] = mg.list_merges(space)
            mg.undo_merge(space, merge.id)
            with pytest.raises(Conflict) as again:
                mg.undo_merge(space, merge.id)
            assert again.value.status == 409
        finally:
            mg.delete_space(space)
