"""The GDS memory budget. In-memory graphs live on Neo4j's heap, and a projection too big for
it takes the whole database down (``OutOfMemoryError``). So every projection is estimated
before it is built (GDS's own estimate for its node and relationship counts). When the graphs
already held plus the estimate would pass a share of the maximum heap
(``UpkeepConfig.projection_heap_share``), idle projections are evicted, least recently used
first (:mod:`~pipelines.consolidate.graph_catalog`), and the projection is refused with a 503
only when that cannot make room."""

from __future__ import annotations

from dataclasses import dataclass

from pipelines.consolidate import graph_catalog
from pipelines.consolidate.config import UpkeepConfig
from pipelines.errors import Unavailable
from pipelines.graph import GraphStore

_MIB = 2**20


@dataclass(frozen=True, slots=True)
class Room:
    estimate: float  # bytes the projection would take
    held: float  # bytes every in-memory graph holds now
    budget: float  # bytes the graphs may hold together

    @property
    def excess(self) -> float:
        return self.held + self.estimate - self.budget


def measure(store: GraphStore, size_statement: str, space: str, share: float) -> Room:
    """The estimate of the projection ``size_statement`` sizes, against the budget."""
    size = store.read(size_statement, space=space)[0]
    row = store.read(
        "consolidate/graph_budget",
        nodes=int(size["nodes"]),
        relationships=int(size["relationships"]),
    )[0]
    return Room(float(row["estimate"]), float(row["held"]), share * float(row["heap_max"]))


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
    share = config.projection_heap_share
    room = measure(store, size_statement, space, share)
    if room.excess <= 0:
        return
    grace = config.projection_evict_grace_seconds
    if graph_catalog.evict(store, room.excess, grace, keep) is not None:
        room = measure(store, size_statement, space, share)
        if room.excess <= 0:
            return
    raise Unavailable(
        f"not enough graph memory for {what} of space {space!r}: it needs about "
        f"{room.estimate / _MIB:.0f} MiB, graphs hold {room.held / _MIB:.0f} MiB, and the "
        f"budget is {room.budget / _MIB:.0f} MiB ({share:.0%} of Neo4j's heap); no projection "
        f"unused for {grace:.0f} s could make room; retry later"
    )
