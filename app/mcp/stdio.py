"""``mnemograph mcp``: the MCP tools over stdio for a desktop agent, from one command line.

A Mnemograph API answering at the configured URL (``--url``/``MNEMOGRAPH_URL``, with
``--api-key``/``MNEMOGRAPH_API_KEY``) is reused through the SDK; otherwise the engine runs in
this process (:mod:`app.mcp.local`), starting the managed local Neo4j if nothing answers,
and what was started here stops when stdin closes (or on SIGTERM). Logs go to stderr only:
stdout carries the protocol."""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
import anyio.to_thread
import httpx

from app.mcp import backend, tools
from app.mcp.local import DeferredBackend, LocalEngine, default_neo4j_dir
from app.settings import Settings
from mnemograph.client import AsyncClient

log = logging.getLogger("mnemograph.mcp")
Mode = Literal["auto", "api", "local"]
DEFAULT_URL = "http://127.0.0.1:8000"
PROBE_SECONDS = 1.5


def api_answers(url: str, api_key: str | None) -> bool:
    """A Mnemograph API answers at ``url`` (its liveness route); a refused key is logged
    (the tools then answer ``unauthorized``, rather than a second engine starting)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with httpx.Client(base_url=url, timeout=PROBE_SECONDS, headers=headers) as http:
            alive = http.get("/healthz")
            if alive.status_code != 200 or alive.json().get("status") != "ok":
                return False
            spaces = http.get("/v1/spaces", params={"limit": 1})
    except (httpx.HTTPError, ValueError, AttributeError):
        return False
    if spaces.status_code in (401, 403):
        log.error("the API at %s refused the API key (%s)", url, spaces.status_code)
    return True


async def _serve_api(url: str, api_key: str | None, space: str | None) -> None:
    async with AsyncClient(url, api_key) as client:
        if space:
            try:
                await client.create_space(space)  # idempotent: an existing space stays
            except Exception as exc:  # the tools report it again, with its code
                log.error("could not create space %r: %s", space, exc)
        server = tools.build(backend.ClientBackend(client), tools.fixed_space(space),
                             tools.any_space)  # fmt: skip
        await _run(server)


async def _serve_local(space: str | None) -> None:
    engine = LocalEngine(Settings(), space)

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        engine.start()  # after the SDK diverted fd 1: nothing the start-up prints reaches it
        try:
            yield
        finally:
            engine.close()

    server = tools.build(DeferredBackend(engine), tools.fixed_space(space), tools.any_space,
                         lifespan=lifespan)  # fmt: skip
    await _run(server, engine.close)


async def _run(server: Any, cleanup: Callable[[], None] | None = None) -> None:
    """Serve until stdin closes. On SIGTERM/SIGINT, run ``cleanup`` and exit: the SDK reads
    stdin in a worker thread that cancelling cannot interrupt."""
    async with anyio.create_task_group() as tg:

        async def on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for signum in signals:
                    log.warning("signal %d: stopping", signum)
                    if cleanup is not None:
                        await anyio.to_thread.run_sync(cleanup)
                    os._exit(0)

        tg.start_soon(on_signal)
        await server.run_stdio_async()
        tg.cancel_scope.cancel()


def run(url: str | None, api_key: str | None, space: str | None, mode: Mode = "auto") -> int:
    """Serve until stdin closes. Logs go to stderr: stdout carries the protocol."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, force=True,
                        format="[mnemograph mcp] %(levelname)s %(message)s")  # fmt: skip
    url = url or os.environ.get("MNEMOGRAPH_URL") or DEFAULT_URL
    api_key = api_key or os.environ.get("MNEMOGRAPH_API_KEY") or None
    os.environ.setdefault("MNEMOGRAPH_NEO4J_DIR", str(default_neo4j_dir()))
    if mode == "api" or (mode == "auto" and api_answers(url, api_key)):
        log.warning("using the Mnemograph API at %s", url)
        anyio.run(_serve_api, url, api_key, space)
    else:
        log.warning("no API at %s: running the engine in this process", url)
        anyio.run(_serve_local, space)
    return 0
