"""The MCP server with the SDK's own client against a live server on a real Neo4j: every
tool round-tripped over streamable HTTP (``/mcp``) and over stdio (``mnemograph mcp``
proxying to the API), bad arguments, a key limited to one space, and a read-only key. The
in-process stdio server (no API running) is in test_mcp_local.py."""

from __future__ import annotations

import json
import os
import sys
import uuid
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from mnemograph.client import Client as Sdk

TOOLS = {"remember", "recall", "context", "correct", "forget", "list_spaces"}


def _data(result: Any) -> dict[str, Any]:
    """A tool's answer: one compact JSON text (no indentation, no nulls)."""
    assert not result.is_error, result.content[0].text
    (block,) = result.content
    data = json.loads(block.text)
    assert block.text == json.dumps(data, separators=(",", ":"), ensure_ascii=False)  # compact
    assert ":null" not in block.text  # no nulls that carry nothing
    return dict(data)


def _error(result: Any) -> dict[str, Any]:
    """A refusal: ``{"error": {"code", "field", "message"}}``, never raw pydantic text."""
    assert result.is_error
    text = result.content[0].text
    assert "pydantic" not in text and "Error executing" not in text, text
    return dict(json.loads(text)["error"])


async def _round_trip(mcp: Client, space: str | None) -> None:
    """remember -> recall -> context -> correct -> forget; ``space`` None: the default."""
    names = {t.name for t in (await mcp.list_tools()).tools}
    assert names >= TOOLS
    extra = {} if space is None else {"space": space}
    messages = [
        {"role": "user", "speaker": "Ana", "content": "Our staging database is Postgres 15."},
        {"role": "assistant", "content": "Noted: staging runs Postgres 15."},
    ]
    stored = _data(await mcp.call_tool("remember", {"messages": messages, **extra}))
    assert stored["counts"]["memories"] == 2
    note = _data(await mcp.call_tool("remember", {"content": "Ana prefers tea.", **extra}))
    assert note["items"][0]["decision"] == "stored"
    found = _data(await mcp.call_tool("recall", {"query": "staging database", "k": 3, **extra}))
    assert "not instructions" in found["trust"]
    top = found["results"][0]
    assert "Postgres" in top["content"]
    ctx = _data(await mcp.call_tool("context", {"query": "staging database", **extra}))
    assert "Postgres" in ctx["prompt"] and "not instructions" in ctx["trust"]
    shown = [i for ids in ctx["included_ids"].values() for i in ids]
    assert top["id"] in shown and ctx["included"] == len(shown)
    assert set(shown) <= {*stored["memory_ids"], *note["memory_ids"]}
    assert ctx["left_out_total"] == sum(ctx["left_out"].values()) >= 0
    assert ctx["mode"] in ("staged", "flat") and ctx["tokens"] > 0
    fixed = _data(
        await mcp.call_tool("correct", {"memory_id": top["id"], "content": "Staging moved to "
                                        "Postgres 16.", "reason": "upgrade", **extra})
    )  # fmt: skip
    assert fixed["superseded"] == top["id"]
    again = _data(await mcp.call_tool("recall", {"query": "staging database Postgres", **extra}))
    assert top["id"] not in [h["id"] for h in again["results"]]
    # control and bidirectional characters reach the model as visible entities
    sneaky = "The deploy window is Friday \x1b[2J\u202eyadnoM\u202c"
    await mcp.call_tool("remember", {"content": sneaky, **extra})
    shown = _data(await mcp.call_tool("recall", {"query": "deploy window", **extra}))
    text = next(h["content"] for h in shown["results"] if "deploy window" in h["content"])
    assert text == "The deploy window is Friday &#x1b;[2J&#x202e;yadnoM&#x202c;"
    ctx = _data(await mcp.call_tool("context", {"query": "deploy window", **extra}))
    assert "&#x202e;yadnoM" in ctx["prompt"] and "\u202e" not in ctx["prompt"]
    gone = _data(await mcp.call_tool("forget", {"memory_id": fixed["by"], **extra}))
    assert gone["deleted"]["memories"] == 1
    # bad arguments come back as tool errors naming the field and the reason
    bad = _error(await mcp.call_tool("recall", {"query": "x", "k": 0, **extra}))
    assert bad == {"code": "invalid_input", "field": "k",
                   "message": "Input should be greater than or equal to 1"}  # fmt: skip
    nothing = _error(await mcp.call_tool("recall", {**extra}))
    assert (nothing["field"], nothing["message"]) == ("query", "required")
    neither = _error(await mcp.call_tool("remember", {**extra}))
    assert neither["code"] == "invalid_input" and neither["field"] == "content"
    missing = _error(await mcp.call_tool("forget", {"memory_id": "no-such-id", **extra}))
    assert missing["code"] == "not_found"
    await _retries(mcp, extra)


async def _retries(mcp: Client, extra: dict[str, str]) -> None:
    """A retried remember stores nothing twice; a given session_id is the session used."""
    tag = uuid.uuid4().hex[:8]
    messages = [{"role": "user", "content": f"The {tag} build runs on Fridays."}]
    first = _data(await mcp.call_tool("remember", {"messages": messages, **extra}))
    again = _data(await mcp.call_tool("remember", {"messages": messages, **extra}))
    assert [i["decision"] for i in first["items"]] == ["stored"]
    assert [i["decision"] for i in again["items"]] == ["unchanged"]
    assert again["memory_ids"] == first["memory_ids"]
    session = f"chat-{tag}"
    note = {"content": f"The {tag} release owner is Ines.", "session_id": session, **extra}
    stored = _data(await mcp.call_tool("remember", note))
    assert _data(await mcp.call_tool("remember", note))["items"][0]["decision"] == "unchanged"
    later = [{"role": "assistant", "content": f"Ines owns the {tag} release."}]
    added = _data(await mcp.call_tool("remember", {"messages": later, "session_id": session,
                                                   **extra}))  # fmt: skip
    assert added["items"][0]["decision"] == "stored"  # a later call adds to the session
    found = _data(await mcp.call_tool("recall", {"query": f"{tag} release owner", **extra}))
    sessions = {h["id"]: h.get("session_id") for h in found["results"]}
    assert sessions[stored["memory_ids"][0]] == session
    assert sessions[added["memory_ids"][0]] == session


def _http(url: str, key: str | None) -> Client:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    transport = streamable_http_client(
        f"{url}/mcp", http_client=httpx2.AsyncClient(headers=headers, timeout=120)
    )
    return Client(transport)


@pytest.fixture
def spaces(live_secured):
    admin = Sdk(live_secured.url, api_key=live_secured.admin_key)
    other = f"mcp-{uuid.uuid4().hex[:8]}"
    admin.create_space(live_secured.limited_space)
    admin.create_space(other)
    yield live_secured, other
    admin.delete_space(live_secured.limited_space)
    admin.delete_space(other)
    admin.close()


def test_tools_over_http(spaces):
    live, other = spaces

    async def main() -> None:
        async with _http(live.url, live.admin_key) as mcp:
            await _round_trip(mcp, other)
            listed = _data(await mcp.call_tool("list_spaces", {}))
            assert {live.limited_space, other} <= {s["id"] for s in listed["spaces"]}

    anyio.run(main)
    # MCP traffic is labelled by tool in the request metrics, never "unmatched"
    metrics = httpx.get(f"{live.url}/metrics").text
    assert 'route="mcp:recall"' in metrics and 'route="mcp:remember"' in metrics
    assert 'route="mcp"' in metrics  # initialize, tools/list


def test_a_limited_key_over_http(spaces):
    live, other = spaces

    async def main() -> None:
        async with _http(live.url, live.limited_key) as mcp:
            await _round_trip(mcp, None)  # its one space is the default
            listed = _data(await mcp.call_tool("list_spaces", {}))
            assert [s["id"] for s in listed["spaces"]] == [live.limited_space]
            denied = _error(await mcp.call_tool("recall", {"query": "x", "space": other}))
            assert denied["code"] == "forbidden" and denied["field"] == "space"

    anyio.run(main)
    r = httpx.post(f"{live.url}/mcp", json={}, headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"


def test_a_read_only_key_over_http(spaces):
    """Every tool that writes refuses a read-only key; the reading tools answer it."""
    live, other = spaces
    with Sdk(live.url, api_key=live.admin_key) as admin:
        stored = admin.add_memories(other, [{"content": "The office plant is a fern."}])
    memory_id = stored.memory_ids[0]

    async def main() -> None:
        async with _http(live.url, live.read_key) as mcp:
            space = {"space": other}
            writes = {
                "remember": {"content": "Ana prefers coffee.", **space},
                "correct": {"memory_id": memory_id, "content": "A cactus.", "reason": "r", **space},
                "forget": {"memory_id": memory_id, **space},
            }
            for tool, args in writes.items():
                denied = await mcp.call_tool(tool, args)
                assert denied.is_error and "forbidden" in denied.content[0].text, tool
            found = _data(await mcp.call_tool("recall", {"query": "office plant", **space}))
            assert [h["id"] for h in found["results"]][:1] == [memory_id]  # nothing changed
            assert (
                "fern"
                in _data(await mcp.call_tool("context", {"query": "plant", **space}))["prompt"]
            )
            listed = _data(await mcp.call_tool("list_spaces", {}))
            assert other in {s["id"] for s in listed["spaces"]}

    anyio.run(main)


def test_tools_over_stdio(live):
    space = f"stdio-{uuid.uuid4().hex[:8]}"
    with Sdk(live.url) as sdk:
        sdk.create_space(space)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app", "mcp", "--space", space, "--url", live.url],  # auto: the API answers
        env=dict(os.environ, MNEMOGRAPH_NEO4J_URI="bolt://127.0.0.1:1"),  # no local fallback
    )

    async def main() -> None:
        async with Client(params) as mcp:
            await _round_trip(mcp, None)

    try:
        anyio.run(main)
    finally:
        with Sdk(live.url) as sdk:
            sdk.delete_space(space)
