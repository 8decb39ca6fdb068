"""The Python SDK against a live server on a real Neo4j: every call family, the error
classes with the server's code and field, pagination, retries, and the model contract."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import uuid

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.main import create_app
from app.settings import Settings
from mnemograph.client import (
    AsyncClient,
    Client,
    Forbidden,
    InvalidInput,
    NotFound,
    RetryPolicy,
    Unauthorized,
    Unavailable,
)
from mnemograph.client.models import CONTRACT
from tests.integration.conftest import _free_port

SESSION = {
    "session_id": "s1",
    "started_at": "2024-03-01T10:00:00Z",
    "turns": [
        {
            "id": "t1",
            "role": "user",
            "speaker": "Ana",
            "content": "We picked Postgres for the ledger.",
        },
        {"id": "t2", "role": "assistant", "speaker": "Bot", "content": "Noted: Postgres, ledger."},
        {"id": "t3", "role": "user", "speaker": "Ana", "content": "My dog Rex loves the beach."},
    ],
}


def _resolve(schema: dict, components: dict) -> dict:
    while "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[1]]
    return schema


def test_sdk_models_match_the_server_openapi(engine):
    """Every field the SDK reads exists in the server's schema, required where the SDK
    requires it (the SDK's copy cannot drift silently)."""
    spec = create_app(Settings(neo4j_uri=engine.store.config.uri), engine=engine).openapi()
    components = spec["components"]["schemas"]
    for model, name in CONTRACT.items():
        assert name in components, f"{name} is not in the server's OpenAPI schema"
        server = _resolve(components[name], components)
        fields = server.get("properties", {})
        required = set(server.get("required", []))
        for attr, info in model.model_fields.items():
            fname = info.alias or attr  # e.g. Stage.stage_schema reads "schema"
            assert fname in fields, f"{model.__name__}.{fname} is not a field of {name}"
            if info.is_required():
                assert fname in required, f"{name}.{fname} is optional on the server"


def test_the_sdk_reads_responses_into_the_servers_own_models():
    """Shared, not copied: the server declares these responses with the classes the SDK
    returns (mnemograph.schema, pydantic only); and the SDK imports nothing of the server."""
    from app.routers import transfer
    from app.schemas import memories, recall, spaces
    from mnemograph.client import models

    assert models.Space is spaces.Space and models.SpaceDeleted is spaces.SpaceDeleted
    assert models.IngestResponse is memories.IngestResponse
    assert models.RecallOut is recall.RecallOut
    assert models.ImportResult is transfer.ImportResult
    code = (
        "import sys, mnemograph.client; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'app', 'pipelines', 'neo4j', 'fastapi', 'torch', 'langchain_core', 'llama_index'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_round_trip(live):
    space = f"sdk-{uuid.uuid4().hex[:8]}"
    with Client(live.url) as mg:
        created = mg.create_space(space, name="SDK test")
        assert created.created and created.id == space
        assert mg.create_space(space).created is False
        changed = mg.update_space(space, settings={"gate": {"enabled": True, "threshold": 0.2}})
        assert changed.settings == {"gate": {"enabled": True, "threshold": 0.2}}
        changed = mg.update_space(space, name="SDK", settings={"gate": None})
        assert (changed.name, changed.settings) == ("SDK", {})
        ingest = mg.add_session(space, SESSION)
        assert ingest.counts["memories"] == 3 and len(ingest.memory_ids) == 3
        note = mg.add_memories(space, [{"content": "The ledger must be audited yearly."}])
        assert note.items[0].decision == "stored"
        hits = mg.recall(space, "Which database for the ledger?", k=3)
        assert hits.results and "Postgres" in hits.results[0].content
        ctx = mg.context(space, "Which database for the ledger?", context_window=2000)
        assert "Postgres" in ctx.prompt and ctx.included_ids
        first = hits.results[0].id
        fixed = mg.supersede(space, first, reason="moved", content="We moved the ledger to SQLite.")
        assert fixed.older == first and fixed.created_memory
        assert mg.get_memory(space, first).memory.status == "superseded"
        gone = mg.delete_memory(space, fixed.newer)
        assert gone.deleted.memories == 1
        assert mg.get_space(space).counts is not None
        run = mg.run_job(space, "decay", dry_run=True)
        assert run.job == "decay" and run.status == "ok"
        assert [r.id for r in mg.iter_jobs(space)] == [run.id]
        one_by_one = [e.key for e in mg.iter_entities(space, page_size=1)]
        assert one_by_one == [e.key for e in mg.iter_entities(space, page_size=100)]
        deleted = mg.delete_space(space)
        assert deleted.deleted.memories >= 3


def test_pagination_walks_every_page(live):
    ids = [f"pg-{uuid.uuid4().hex[:6]}-{i}" for i in range(5)]
    with Client(live.url) as mg:
        for sid in ids:
            mg.create_space(sid)
        try:
            seen = [s.id for s in mg.iter_spaces(page_size=2)]
            assert set(ids) <= set(seen) and len(seen) == len(set(seen))
        finally:
            for sid in ids:
                mg.delete_space(sid)


def test_errors_carry_code_and_field(live):
    space = f"err-{uuid.uuid4().hex[:8]}"
    with Client(live.url) as mg:
        mg.create_space(space)
        with pytest.raises(InvalidInput) as bad:
            mg.recall(space, "anything", k=0)
        assert bad.value.status == 422 and bad.value.code == "invalid_input"
        assert bad.value.field == "k"
        with pytest.raises(NotFound) as missing:
            mg.get_memory(space, "no-such-memory")
        assert missing.value.code == "not_found"
        with pytest.raises(NotFound):
            mg.recall(f"none-{uuid.uuid4().hex[:6]}", "x")
        mg.delete_space(space)


def test_keys_and_space_scoping(live_secured):
    with Client(live_secured.url, api_key=live_secured.admin_key) as admin:
        admin.create_space(live_secured.limited_space)
        other = f"other-{uuid.uuid4().hex[:6]}"
        admin.create_space(other)
    try:
        with Client(live_secured.url, api_key="wrong") as mg, pytest.raises(Unauthorized):
            mg.list_spaces()
        with Client(live_secured.url, api_key=live_secured.limited_key) as mg:
            assert [s.id for s in mg.iter_spaces()] == [live_secured.limited_space]
            with pytest.raises(Forbidden) as denied:
                mg.recall(other, "x")
            assert denied.value.status == 403
    finally:
        with Client(live_secured.url, api_key=live_secured.admin_key) as admin:
            admin.delete_space(live_secured.limited_space)
            admin.delete_space(other)


def test_async_client(live):
    space = f"aio-{uuid.uuid4().hex[:8]}"

    async def main() -> list[str]:
        async with AsyncClient(live.url) as mg:
            await mg.create_space(space)
            await mg.add_session(space, SESSION)
            hits = await mg.recall(space, "Rex the dog", k=2)
            names = [s.id async for s in mg.iter_spaces(page_size=50)]
            await mg.delete_space(space)
            assert space in names
            return [h.content for h in hits.results]

    contents = asyncio.run(main())
    assert any("Rex" in c for c in contents)


@pytest.fixture(scope="module")
def busy_server():
    """A real HTTP server that refuses the first two calls with 503 + Retry-After, as an
    overloaded Mnemograph does, then answers."""
    calls = {"n": 0}

    async def spaces(_: Request) -> JSONResponse:
        calls["n"] += 1
        if calls["n"] <= 2:
            body = {"error": {"code": "unavailable", "message": "busy", "field": None}}
            return JSONResponse(body, status_code=503, headers={"Retry-After": "0.05"})
        return JSONResponse({"spaces": [{"id": "s"}]})

    async def slow(_: Request) -> JSONResponse:
        body = {"error": {"code": "unavailable", "message": "down", "field": None}}
        return JSONResponse(body, status_code=503, headers={"Retry-After": "3600"})

    app = Starlette(routes=[Route("/v1/spaces", spaces), Route("/v1/spaces/slow", slow)])
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.02)
    yield f"http://127.0.0.1:{port}", calls
    server.should_exit = True
    thread.join(timeout=10)


def test_retries_honour_retry_after(busy_server):
    url, calls = busy_server
    with Client(url, retry=RetryPolicy(attempts=4, max_wait_s=1.0)) as mg:
        assert [s.id for s in mg.list_spaces()] == ["s"]
    assert calls["n"] == 3
    # a Retry-After beyond the bound is not waited out: the error comes at once
    with Client(url, retry=RetryPolicy(attempts=4, max_wait_s=1.0)) as mg:
        with pytest.raises(Unavailable) as refused:
            mg.get_space("slow")
        assert refused.value.retry_after == 3600 and refused.value.code == "unavailable"


def _unavailable(committed: bool | None) -> JSONResponse:
    error: dict = {"code": "unavailable", "message": "Neo4j is down", "field": None}
    if committed is not None:
        error["may_have_committed"] = committed
    return JSONResponse({"error": error}, status_code=503, headers={"Retry-After": "0.01"})


INGESTED = {"stage_ids": [], "memory_ids": ["m1"], "items": [], "counts": {"memories": 1}}


@pytest.fixture(scope="module")
def outage_server():
    """A real HTTP server answering as Mnemograph does while Neo4j fails mid-write: the first
    call to a path gets a 503 whose ``may_have_committed`` is the space's name up to a dash
    ("true", "false", or "missing": no field), the next ones succeed. Counts the calls per path."""
    calls: dict[str, int] = {}

    async def handle(request: Request) -> JSONResponse:
        path = request.url.path
        calls[path] = calls.get(path, 0) + 1
        if calls[path] == 1:
            flag = request.path_params["space"].split("-")[0]
            return _unavailable({"true": True, "false": False}.get(flag))
        return JSONResponse(INGESTED, status_code=201)

    app = Starlette(routes=[Route("/v1/spaces/{space}/{rest:path}", handle, methods=["POST"])])
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.02)
    yield f"http://127.0.0.1:{port}", calls
    server.should_exit = True
    thread.join(timeout=10)


def test_a_write_that_may_have_committed_is_not_resent(outage_server):
    """The shared contract: without ids, an ingest that failed mid-write is not sent again
    (a resend could store it twice); a missing field counts as "may have committed"."""
    url, calls = outage_server
    policy = RetryPolicy(attempts=4, max_wait_s=1.0)
    with Client(url, retry=policy) as mg:
        for flag in ("true", "missing"):
            with pytest.raises(Unavailable) as failed:
                mg.add_memories(flag, [{"content": "no id"}])
            assert failed.value.may_have_committed is (True if flag == "true" else None)
            assert calls[f"/v1/spaces/{flag}/memories"] == 1
        # nothing was written: resent, and the second answer is the result
        assert mg.add_memories("false", [{"content": "no id"}]).memory_ids == ["m1"]
        assert calls["/v1/spaces/false/memories"] == 2


def test_idempotent_calls_are_resent_whatever_the_flag(outage_server):
    url, calls = outage_server
    policy = RetryPolicy(attempts=4, max_wait_s=1.0)
    session = {"session_id": "s", "turns": [{"id": "t1", "role": "user", "content": "hi"}]}
    with Client(url, retry=policy) as mg:
        assert mg.add_session("true", session).memory_ids == ["m1"]  # explicit ids: safe
    assert calls["/v1/spaces/true/sessions"] == 2

    async def main() -> None:
        async with AsyncClient(url, retry=policy) as mg:
            with pytest.raises(Unavailable):
                await mg.add_session("missing-aio", {**session, "turns": [{"role": "user"}]})
            assert calls["/v1/spaces/missing-aio/sessions"] == 1
            await mg.add_memories("missing-aio", [{"id": "m1", "content": "with id"}])
            assert calls["/v1/spaces/missing-aio/memories"] == 2

    asyncio.run(main())
