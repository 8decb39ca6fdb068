"""Job leases: one runner per (space, job) across processes and replicas.

A lease ``(:Lease {space, job})`` is taken atomically in Neo4j (``MERGE`` plus a conditional
``SET`` after a locking write). Its holder renews it between batches; a crashed holder's lease
simply expires, and the next runner to take it marks the crashed run ``interrupted``.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from dataclasses import dataclass, field

from pipelines.graph import GraphStore


class JobAborted(RuntimeError):
    """The runner lost its lease (another runner took over after it expired)."""


def _holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass
class Lease:
    store: GraphStore
    space: str
    job: str
    holder: str
    ttl_seconds: float
    renewed: float = field(default_factory=time.monotonic)

    def renew(self) -> None:
        rows = self.store.write(
            "consolidate/lease_renew",
            space=self.space,
            job=self.job,
            holder=self.holder,
            ttl=self.ttl_seconds,
        )
        if not rows:
            raise JobAborted(f"lease of {self.job!r} in space {self.space!r} was lost")
        self.renewed = time.monotonic()

    def release(self) -> None:
        self.store.write(
            "consolidate/lease_release", space=self.space, job=self.job, holder=self.holder
        )


def acquire_lease(
    store: GraphStore, space: str, job: str, holder: str | None = None, ttl_seconds: float = 900.0
) -> Lease | None:
    """Take the (space, job) lease, or return ``None`` when another live runner holds it."""
    holder = holder or _holder()
    row = store.write(
        "consolidate/lease_acquire", space=space, job=job, holder=holder, ttl=ttl_seconds
    )[0]
    if not row["acquired"]:
        return None
    if row.get("expired_holder"):
        store.write(
            "consolidate/jobrun_interrupted", space=space, job=job, holder=row["expired_holder"]
        )
    return Lease(store, space, job, holder, ttl_seconds)
