"""The cold start of ``mnemograph mcp``, timed as a desktop client sees it.

Spawns the server by its command line over stdio with the official MCP client, with no API
and no Neo4j running (a fresh data directory and free ports), so it starts the managed
Neo4j and the engine itself; times launch -> ``initialize`` answered, launch -> the first
``remember`` stored (retried while it answers ``unavailable``), launch -> the ``recall``
answer; then closes stdin and checks that the Neo4j it started is gone.

    python -m benchmarks.mcp_start [--keep]

The jar cache (``mnemograph neo4j`` fetches it once from Maven Central) is reused; a clone
that has never fetched it adds the download on top.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from neo4j_runtime import runtime

REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _measure(params: StdioServerParameters) -> dict[str, Any]:
    t0 = time.monotonic()
    out: dict[str, Any] = {}
    async with Client(params) as mcp:
        out["initialize_s"] = round(time.monotonic() - t0, 2)
        note = {"content": "The cold-start probe ran on a fresh data directory."}
        while True:
            result = await mcp.call_tool("remember", note)
            body = json.loads(result.content[0].text)
            if not result.is_error:
                break
            if body["error"]["code"] != "unavailable" or "could not" in body["error"]["message"]:
                raise SystemExit(f"remember failed: {body}")
            await anyio.sleep(1)
        out["remember_s"] = round(time.monotonic() - t0, 2)
        found = json.loads((await mcp.call_tool("recall", {"query": "cold-start probe"}))
                           .content[0].text)  # fmt: skip
        out["recall_s"] = round(time.monotonic() - t0, 2)
        out["recalled"] = found["results"][0]["content"] if found.get("results") else None
    out["closed_s"] = round(time.monotonic() - t0, 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mcp_start")
    parser.add_argument("--keep", action="store_true", help="keep the data directory")
    args = parser.parse_args(argv)
    data = Path(tempfile.mkdtemp(prefix="mnemograph-mcp-cold-"))
    bolt = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOGRAPH_")}
    env.update(MNEMOGRAPH_NEO4J_DIR=str(data), MNEMOGRAPH_NEO4J_PORT=str(bolt),
               MNEMOGRAPH_NEO4J_HTTP_PORT="off",
               MNEMOGRAPH_URL=f"http://127.0.0.1:{_free_port()}")  # fmt: skip
    params = StdioServerParameters(command=sys.executable, args=["-m", "app", "mcp", "--space",
                                   "cold-start"], env=env, cwd=REPO)  # fmt: skip
    try:
        out = anyio.run(_measure, params)
        out["neo4j_left_running"] = runtime.port_open("127.0.0.1", bolt)
        print(json.dumps(out, indent=2))
        return 1 if out["neo4j_left_running"] else 0
    finally:
        if not args.keep:
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
