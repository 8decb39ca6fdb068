"""``mnemograph mcp --space NAME``: the MCP tools over stdio for a desktop agent, backed by a
running Mnemograph server through the SDK (its URL and key from the flags or environment)."""

from __future__ import annotations

import logging
import sys

import anyio

from app.mcp import backend, tools
from mnemograph.client import AsyncClient


async def serve(url: str | None, api_key: str | None, space: str | None) -> None:
    async with AsyncClient(url, api_key) as client:
        server = tools.build(
            backend.ClientBackend(client), tools.fixed_space(space), tools.any_space
        )
        await server.run_stdio_async()


def run(url: str | None, api_key: str | None, space: str | None) -> int:
    """Serve until stdin closes. Logs go to stderr: stdout carries the protocol."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, force=True)
    anyio.run(serve, url, api_key, space)
    return 0
