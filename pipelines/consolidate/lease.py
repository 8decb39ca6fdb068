"""Job leases that follow their holder: one runner per (space, job), freed soon after a crash.

A lease is a ``(:Lease {space, job})`` node with a holder and an expiry. It is taken atomically
in Neo4j (``MERGE`` plus a conditional ``SET`` after a locking write), so one runner per job and
space exists even with several API replicas. The TTL is short (``RunnerConfig.
lease_ttl_seconds``, 60 s): a live runner keeps it with a **heartbeat**, a thread of its own that
renews it every ``renew_every_seconds`` (15 s) whatever the job is doing (a long GDS call
included). A runner that dies stops beating, so its lease expires within one TTL and:

* its run record reads ``interrupted`` at once in the jobs history (the read statements derive
  it: a ``running`` run whose holder no longer holds a live lease), and
* is stored as ``interrupted`` when the next runner takes any lease in the space.

A runner that loses its lease (it could not renew for a whole TTL and another runner took over)
learns it at its next checkpoint (:class:`JobAborted`). A release that fails (Neo4j went down
as the job ended) is retried, with the run's last record, until it succeeds or the lease has
expired: the run does not read ``running`` and its job stay blocked for a whole TTL.
"""

from __future__ import annotations

import contextvars
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from pipelines import spaces
from pipelines.graph import GraphStore

log = logging.getLogger("mnemograph.consolidate")

#: How often a failed release is retried (at least this often, or at each heartbeat): while
#: Neo4j is down each try fails at once, without a connection.
RELEASE_RETRY_SECONDS = 1.0


class JobAborted(RuntimeError):
    """The runner lost its lease (another runner took over after it expired)."""


def new_holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass
class Lease:
    store: GraphStore
    space: str
    job: str
    holder: str
    ttl_seconds: float
    renewed: float = field(default_factory=time.monotonic)
    lost: threading.Event = field(default_factory=threading.Event)
    #: Set once the lease node is deleted (released by its holder).
    released: threading.Event = field(default_factory=threading.Event)
    _pending_done: threading.Event = field(default_factory=threading.Event, repr=False)
    _every: float = field(default=RELEASE_RETRY_SECONDS, repr=False)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _beat: threading.Thread | None = field(default=None, repr=False)

    def renew(self) -> None:
        """Extend the lease by a TTL; :class:`JobAborted` when another runner holds it now."""
        rows = self.store.write(
            "consolidate/lease_renew",
            space=self.space,
            job=self.job,
            holder=self.holder,
            ttl=self.ttl_seconds,
        )
        if not rows:
            self.lost.set()
            raise JobAborted(f"lease of {self.job!r} in space {self.space!r} was lost")
        self.renewed = time.monotonic()

    def start_heartbeat(self, every_seconds: float) -> None:
        """Renew every ``every_seconds`` from a daemon thread until :meth:`release`."""
        if self._beat is not None:
            return
        self._every = every_seconds
        self._beat = threading.Thread(
            # in the starter's context: with tracing on, the renewals nest under the job run
            target=contextvars.copy_context().run,
            args=(self._heartbeat, every_seconds),
            name=f"lease-{self.job}-{self.space}",
            daemon=True,
        )
        self._beat.start()

    def _heartbeat(self, every_seconds: float) -> None:
        while not self._stop.wait(every_seconds):
            try:
                self.renew()
            except JobAborted:
                log.warning("lost the lease of %s in %s", self.job, self.space)
                return
            except Exception:  # Neo4j unreachable for now: try again at the next beat
                log.warning(
                    "could not renew the lease of %s in %s", self.job, self.space, exc_info=True
                )

    def stop_heartbeat(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
            self._beat = None

    def release(self, pending: Callable[[], object] | None = None) -> None:
        """Stop the heartbeat, write ``pending`` (the run's last record) and delete the lease.
        When that fails (Neo4j is down), it is retried from a thread of its own, at the latest
        at each heartbeat, until it succeeds or the lease has expired; the failure is raised."""
        self.stop_heartbeat()
        try:
            self._release(pending)
        except Exception:
            threading.Thread(
                target=self._release_later,
                args=(pending,),
                name=f"lease-release-{self.job}-{self.space}",
                daemon=True,
            ).start()
            raise

    def _release(self, pending: Callable[[], object] | None) -> None:
        if pending is not None and not self._pending_done.is_set():
            pending()
            self._pending_done.set()
        self.store.write(
            "consolidate/lease_release", space=self.space, job=self.job, holder=self.holder
        )
        self.released.set()

    def _release_later(self, pending: Callable[[], object] | None) -> None:
        every = min(self._every, RELEASE_RETRY_SECONDS)
        while time.monotonic() < self.renewed + self.ttl_seconds:  # then it lapsed by itself
            time.sleep(every)
            try:
                self._release(pending)
            except Exception:
                log.info("the lease of %s in %s is not released yet", self.job, self.space)
                continue
            log.info("released the lease of %s in %s after a failed release", self.job, self.space)
            return


def acquire_lease(
    store: GraphStore, space: str, job: str, holder: str | None = None, ttl_seconds: float = 60.0
) -> Lease | None:
    """Take the (space, job) lease, or return ``None`` when another live runner holds it.

    Taking it also stores ``interrupted`` on every run of the space whose runner no longer
    holds a live lease (crashed runners, whichever job they ran)."""
    holder = holder or new_holder()
    row = spaces.write_locked(  # no lease, so no job, in a space being erased
        store, space, "consolidate/lease_acquire", job=job, holder=holder, ttl=ttl_seconds
    )[0]
    if not row["acquired"]:
        return None
    store.write("consolidate/jobrun_interrupt_stale", space=space)
    return Lease(store, space, job, holder, ttl_seconds)
