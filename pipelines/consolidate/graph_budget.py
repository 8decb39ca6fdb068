"""The GDS memory budget. In-memory graphs live on Neo4j's heap, and a projection too big for
it takes the whole database down (``OutOfMemoryError``). So every projection is estimated
before it is built (GDS's own estimate for its node and relationship counts) and refused with
a 503 when the graphs already held plus the estimate would pass a share of the maximum heap
(``UpkeepConfig.projection_heap_share``)."""

from __future__ import annotations

from pipelines.errors import Unavailable
from pipelines.graph import GraphStore

_MIB = 2**20


def require_room(
    store: GraphStore, what: str, size_statement: str, space: str, share: float
) -> None:
    """Raise :class:`Unavailable` unless projecting ``what`` (sized by ``size_statement``)
    fits in the budget."""
    size = store.read(size_statement, space=space)[0]
    row = store.read(
        "consolidate/graph_budget",
        nodes=int(size["nodes"]),
        relationships=int(size["relationships"]),
    )[0]
    budget = share * float(row["heap_max"])
    needed = float(row["held"]) + float(row["estimate"])
    if needed > budget:
        raise Unavailable(
            f"not enough graph memory for {what} of space {space!r}: it needs about "
            f"{row['estimate'] / _MIB:.0f} MiB, graphs hold {row['held'] / _MIB:.0f} MiB, and "
            f"the budget is {budget / _MIB:.0f} MiB ({share:.0%} of Neo4j's heap); retry later"
        )
