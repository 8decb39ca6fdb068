"""A live HTTP server for the clients (SDK, CLI, MCP): uvicorn in a thread on a free port,
on the session's engine (a real Neo4j)."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
import uvicorn

from app.main import create_app
from app.settings import Settings


@dataclass(frozen=True)
class Live:
    url: str
    admin_key: str | None = None
    limited_key: str | None = None
    limited_space: str | None = None
    read_key: str | None = None  # read-only, every space


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(settings: Settings, engine) -> Iterator[str]:
    port = _free_port()
    config = uvicorn.Config(
        create_app(settings, engine=engine), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "the live server did not become ready"
        time.sleep(0.1)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture(scope="session")
def live(engine) -> Iterator[Live]:
    """An open server (no keys), as on a loopback address."""
    yield from (Live(url) for url in _serve(Settings(neo4j_uri=engine.store.config.uri), engine))


@pytest.fixture(scope="session")
def live_secured(engine) -> Iterator[Live]:
    """A server with three keys: an admin key, one limited to one space, one read-only."""
    limited = f"lim-{uuid.uuid4().hex[:8]}"
    settings = Settings(
        api_keys=f"admin-key;limited-key:{limited};reader-key@read",
        neo4j_uri=engine.store.config.uri,
    )
    for url in _serve(settings, engine):
        yield Live(url, "admin-key", "limited-key", limited, "reader-key")
