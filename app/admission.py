"""Bounded admission: overload is refused, not absorbed.

Every request under ``/v1`` belongs to a route class (``ingest``, ``read``, ``jobs``,
``other``) with a limit on how many of its requests run at once. A request beyond the limit
waits at most ``wait_seconds`` for a slot, and only while fewer than ``limit`` others wait;
otherwise it gets a fast ``503`` with ``Retry-After`` in the one JSON error shape. The health
endpoints are never limited, and the limits together stay far below the server's worker
threads, so ``/healthz`` and ``/readyz`` always find one.

The counters live on the event loop (an ASGI middleware): no locks, no threads.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from app.errors import error_body

ROUTE_CLASSES = ("ingest", "read", "jobs", "other")
#: Sized for a small machine: together far below the server's worker threads (40).
DEFAULT_LIMITS = {"ingest": 2, "read": 6, "jobs": 2, "other": 8}
_POLL_SECONDS = 0.01
#: The scope key a refusal records its route class under.
REFUSED = "mnemograph.admission_refused"

# (method, path pattern under /v1/spaces/{space}) -> class; anything else under /v1 is "other"
_RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("POST", re.compile(r"^/v1/spaces/[^/]+/(sessions|memories|import)$"), "ingest"),
    ("POST", re.compile(r"^/v1/spaces/[^/]+/memories/.+/supersede$"), "ingest"),
    ("POST", re.compile(r"^/v1/spaces/[^/]+/(recall|context)$"), "read"),
    ("POST", re.compile(r"^/v1/spaces/[^/]+/jobs/[^/]+$"), "jobs"),
)


def route_class(method: str, path: str) -> str | None:
    """The class of a request, or ``None`` for one that is never limited (health, docs)."""
    if not path.startswith("/v1/"):
        return None
    for rule_method, pattern, name in _RULES:
        if method == rule_method and pattern.match(path):
            return name
    return "other"


def parse_limits(text: str, defaults: Mapping[str, int]) -> dict[str, int]:
    """``"read=6,ingest=2"`` over ``defaults``; ``ValueError`` naming a bad class or limit."""
    limits = dict(defaults)
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or name not in ROUTE_CLASSES:
            raise ValueError(f"{part!r}: expected <class>=<limit>, classes {ROUTE_CLASSES}")
        if not value.strip().isdigit() or int(value) < 1:
            raise ValueError(f"{part!r}: the limit must be a whole number of at least 1")
        limits[name] = int(value)
    return limits


@dataclass
class _Gate:
    limit: int
    running: int = 0
    waiting: int = 0


@dataclass
class Admission:
    """The ASGI middleware. ``limits`` by route class; ``wait_seconds`` the longest wait."""

    app: ASGIApp
    limits: Mapping[str, int]
    wait_seconds: float = 0.5
    retry_after_seconds: int = 1
    _gates: dict[str, _Gate] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._gates = {name: _Gate(self.limits[name]) for name in ROUTE_CLASSES}

    def in_flight(self) -> dict[str, int]:
        return {name: gate.running for name, gate in self._gates.items()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = route_class(scope["method"], scope["path"]) if scope["type"] == "http" else None
        if name is None:
            await self.app(scope, receive, send)
            return
        gate = self._gates[name]
        if not await self._enter(gate):
            scope[REFUSED] = name  # for the metrics: refused before routing, and of what class
            await self._refuse(name, gate, scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            gate.running -= 1

    async def _enter(self, gate: _Gate) -> bool:
        if gate.running < gate.limit:
            gate.running += 1
            return True
        if gate.waiting >= gate.limit:  # the waiting room is bounded too
            return False
        gate.waiting += 1
        try:
            deadline = time.monotonic() + self.wait_seconds
            while time.monotonic() < deadline:
                await asyncio.sleep(_POLL_SECONDS)
                if gate.running < gate.limit:
                    gate.running += 1
                    return True
            return False
        finally:
            gate.waiting -= 1

    async def _refuse(
        self, name: str, gate: _Gate, scope: Scope, receive: Receive, send: Send
    ) -> None:
        message = (
            f"overloaded: {gate.limit} {name} requests are already running; "
            f"retry after {self.retry_after_seconds} s"
        )
        response = JSONResponse(
            error_body("overloaded", message, may_have_committed=False),
            status_code=503,
            headers={"Retry-After": str(self.retry_after_seconds)},
        )
        await response(scope, receive, send)
