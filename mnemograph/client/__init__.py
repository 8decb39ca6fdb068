"""The Python SDK: :class:`Client` (sync) and :class:`AsyncClient` over httpx.

::

    from mnemograph.client import Client

    with Client("http://127.0.0.1:8000", api_key="...") as mg:
        mg.create_space("demo")
        mg.add_memories("demo", [{"content": "We chose Postgres for the ledger."}])
        print(mg.context("demo", "Which database did we pick?", context_window=4000).prompt)

Errors raise :class:`MnemographError` subclasses carrying the server's ``code`` and
``field``; refusals (429, 503) are retried after the server's ``Retry-After`` (bounded by
:class:`RetryPolicy`).
"""

from mnemograph.client import models
from mnemograph.client.aio import AsyncClient
from mnemograph.client.calls import RetryPolicy
from mnemograph.client.errors import (
    Conflict,
    ConnectionFailed,
    Forbidden,
    InvalidInput,
    MnemographError,
    NotFound,
    Unauthorized,
    Unavailable,
)
from mnemograph.client.sync import Client

__all__ = [
    "AsyncClient",
    "Client",
    "Conflict",
    "ConnectionFailed",
    "Forbidden",
    "InvalidInput",
    "MnemographError",
    "NotFound",
    "RetryPolicy",
    "Unauthorized",
    "Unavailable",
    "models",
]
