"""The GDS memory budget. In-memory graphs live on Neo4j's heap, and a projection too big for
it takes the whole database down (``OutOfMemoryError``). So every projection is estimated
before it is built (GDS's own estimate for its node and relationship counts). When the graphs
already held plus the estimate would pass the budget, idle projections are evicted, least
recently used first (:mod:`~pipelines.consolidate.graph_catalog`), and the projection is
refused with a 503 only when that cannot make room.

The budget is derived from Neo4j's heap with headroom::

    heap   = server.memory.heap.max_size as the server reports it (the JVM's maximum heap
             when that is unset, or the server does not let this user read its settings)
    budget = min(projection_heap_share × heap, heap − projection_heap_headroom_mib)

so the graphs never take more than their share, and always leave the headroom to Neo4j's own
transactions and queries (defaults 0.5 and 512 MiB: 1 GiB of a 2 GiB heap, 256 MiB of 1 GiB).
Refusals are counted in this process by reason (:func:`refusals`): ``too_large`` (the
projection alone passes the budget) or ``in_use`` (the graphs held leave no room, and none
idle long enough to be evicted would make it)."""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from dataclasses import dataclass

from neo4j.exceptions import ClientError

from pipelines.consolidate import graph_catalog
from pipelines.consolidate.config import UpkeepConfig
from pipelines.errors import Unavailable
from pipelines.graph import GraphStore

_MIB = 2**20
#: How long a store's configured heap is trusted (it changes only with a restart).
HEAP_TTL_SECONDS = 300.0
REASONS = ("too_large", "in_use")

_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)

_guard = threading.Lock()
_heaps: dict[tuple[str, str], tuple[float | None, float]] = {}
_refused: Counter[str] = Counter()


def parse_bytes(text: str) -> float:
    """Bytes of a Neo4j size setting: ``2.00GiB``, ``2g``, ``512m``, ``1048576`` (binary
    units, as Neo4j reads them); ``ValueError`` for anything else."""
    m = _SIZE.match(text)
    if m is None:
        raise ValueError(f"not a size: {text!r}")
    return float(m.group(1)) * _UNITS[m.group(2).lower()]


def derive(heap: float, share: float, headroom_mib: int) -> float:
    """The budget for a heap of ``heap`` bytes (never below 0)."""
    return max(0.0, min(share * heap, heap - headroom_mib * _MIB))


def configured_heap(store: GraphStore) -> float | None:
    """``server.memory.heap.max_size`` in bytes, or None (unset, or not readable by this
    user), cached for :data:`HEAP_TTL_SECONDS`."""
    key = (store.config.uri, store.config.database)
    now = time.monotonic()
    with _guard:
        cached = _heaps.get(key)
    if cached is not None and now - cached[1] < HEAP_TTL_SECONDS:
        return cached[0]
    try:
        rows = store.read("consolidate/heap_configured")
    except ClientError:  # listing settings needs admin rights: fall back to the JVM's heap
        rows = []
    value = rows[0]["value"] if rows else None
    heap = parse_bytes(str(value)) if value else None
    with _guard:
        _heaps[key] = (heap, now)
    return heap


@dataclass(frozen=True, slots=True)
class Room:
    estimate: float  # bytes the projection would take
    held: float  # bytes every in-memory graph holds now
    budget: float  # bytes the graphs may hold together

    @property
    def excess(self) -> float:
        return self.held + self.estimate - self.budget


def measure(store: GraphStore, size_statement: str, space: str, config: UpkeepConfig) -> Room:
    """The estimate of the projection ``size_statement`` sizes, against the budget."""
    size = store.read(size_statement, space=space)[0]
    row = store.read(
        "consolidate/graph_budget",
        nodes=int(size["nodes"]),
        relationships=int(size["relationships"]),
    )[0]
    heap = configured_heap(store) or float(row["heap_max"])
    budget = derive(heap, config.projection_heap_share, config.projection_heap_headroom_mib)
    return Room(float(row["estimate"]), float(row["held"]), budget)


def budget_bytes(store: GraphStore, config: UpkeepConfig, jvm_heap: float) -> float:
    """The budget under ``config`` now, given the JVM's maximum heap (for ``/metrics``)."""
    heap = configured_heap(store) or jvm_heap
    return derive(heap, config.projection_heap_share, config.projection_heap_headroom_mib)


def refusals() -> dict[str, int]:
    """Projections this process refused, by reason."""
    with _guard:
        return {reason: _refused.get(reason, 0) for reason in REASONS}


def require_room(
    store: GraphStore,
    what: str,
    size_statement: str,
    space: str,
    config: UpkeepConfig,
    keep: str | None = None,
) -> None:
    """Make room for ``what`` (sized by ``size_statement``), evicting idle projections other
    than ``keep`` if needed; :class:`Unavailable` when it still would not fit."""
    room = measure(store, size_statement, space, config)
    if room.excess <= 0:
        return
    grace = config.projection_evict_grace_seconds
    fits_alone = room.estimate <= room.budget  # else no eviction can make room
    if fits_alone and graph_catalog.evict(store, room.excess, grace, keep) is not None:
        room = measure(store, size_statement, space, config)
        if room.excess <= 0:
            return
    reason = "too_large" if room.estimate > room.budget else "in_use"
    with _guard:
        _refused[reason] += 1
    why = (
        "it alone passes the budget"
        if reason == "too_large"
        else f"no projection unused for {grace:.0f} s could make room"
    )
    raise Unavailable(
        f"not enough graph memory for {what} of space {space!r}: it needs about "
        f"{room.estimate / _MIB:.0f} MiB, graphs hold {room.held / _MIB:.0f} MiB, and the "
        f"budget is {room.budget / _MIB:.0f} MiB (the least of "
        f"{config.projection_heap_share:.0%} of Neo4j's heap and the heap less "
        f"{config.projection_heap_headroom_mib} MiB); {why}; retry later"
    )
