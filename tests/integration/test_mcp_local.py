"""``mnemograph mcp`` as a desktop client runs it: spawned by its command line over stdio by
the official MCP client, with no API running, so it runs the engine in its own process on
the session's Neo4j (the "Neo4j already running" path; starting Neo4j itself is measured by
hand, see docs/mcp.md)."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 300  # the child loads the models itself; tool calls answer "unavailable" until then


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _text(result: Any) -> str:
    (block,) = result.content
    return str(block.text)


async def _first_call(mcp: Client, arguments: dict[str, Any]) -> dict[str, Any]:
    """remember, retried while the engine starts (as a model would, told to retry)."""
    deadline = time.monotonic() + START_SECONDS
    while True:
        result = await mcp.call_tool("remember", arguments)
        body = json.loads(_text(result))
        if not (result.is_error and body["error"]["code"] == "unavailable"):
            assert not result.is_error, body
            return dict(body)
        assert "could not start" not in body["error"]["message"], body
        assert body["error"]["may_have_committed"] is False
        assert time.monotonic() < deadline, body
        await anyio.sleep(1)


def test_in_process_stdio_server(neo4j_uri, neo4j_login):
    space = f"mcp-local-{uuid.uuid4().hex[:8]}"
    env = dict(os.environ, MNEMOGRAPH_URL=f"http://127.0.0.1:{_free_port()}",  # no API there
               MNEMOGRAPH_NEO4J_URI=neo4j_uri, MNEMOGRAPH_API_KEY="")  # fmt: skip
    login = {"MNEMOGRAPH_NEO4J_USER": neo4j_login["user"], "MNEMOGRAPH_NEO4J_PASSWORD":
             neo4j_login["password"]}  # fmt: skip
    env.update({k: v for k, v in login.items() if v})
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "app", "mcp", "--space", space], env=env, cwd=ROOT
    )
    messages = [
        {"role": "user", "speaker": "Ana", "content": "Our staging database is Postgres 15."},
        {"role": "assistant", "content": "Noted: staging runs Postgres 15."},
    ]

    async def main() -> None:
        t0 = time.monotonic()
        async with Client(params) as mcp:
            assert time.monotonic() - t0 < 60  # initialize answered before the engine is up
            names = {t.name for t in (await mcp.list_tools()).tools}
            assert names == {"remember", "recall", "context", "correct", "forget", "list_spaces"}
            stored = await _first_call(mcp, {"messages": messages, "session_id": "chat-1"})
            assert [i["decision"] for i in stored["items"]] == ["stored", "stored"]
            retried = json.loads(_text(await mcp.call_tool(
                "remember", {"messages": messages, "session_id": "chat-1"})))  # fmt: skip
            assert [i["decision"] for i in retried["items"]] == ["unchanged", "unchanged"]
            assert retried["memory_ids"] == stored["memory_ids"]
            found = json.loads(_text(await mcp.call_tool("recall", {"query": "staging database"})))
            top = found["results"][0]
            assert "Postgres 15" in top["content"] and top["session_id"] == "chat-1"
            assert top["id"] in stored["memory_ids"]
            bad = await mcp.call_tool("recall", {"query": "staging", "k": 99})
            assert bad.is_error and "pydantic" not in _text(bad)
            assert json.loads(_text(bad)) == {"error": {"code": "invalid_input", "field": "k",
                "message": "Input should be less than or equal to 50"}}  # fmt: skip
            spaces = json.loads(_text(await mcp.call_tool("list_spaces", {})))
            assert space in {s["id"] for s in spaces["spaces"]}  # the default space was created
            gone = json.loads(_text(await mcp.call_tool("forget", {"memory_id": top["id"]})))
            assert gone["deleted"]["memories"] == 1

    anyio.run(main)
    _drop(neo4j_uri, neo4j_login, space)


def _drop(uri: str, login: dict[str, str | None], space: str) -> None:
    from pipelines import spaces
    from pipelines.graph import GraphConfig, GraphStore

    store = GraphStore(GraphConfig(uri=uri, **login))
    try:
        spaces.delete(store, space)
    finally:
        store.close()
