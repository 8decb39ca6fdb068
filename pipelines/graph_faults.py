"""How the store behaves when Neo4j fails: a breaker that answers at once while Neo4j is
unreachable, and the one retry loop of every transaction, which stops as soon as the breaker
knows Neo4j is down (so a request in flight never waits out blind retries)."""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from neo4j.exceptions import (
    ConnectionAcquisitionTimeoutError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

T = TypeVar("T")


class GraphUnavailable(RuntimeError):
    """Neo4j cannot be reached, or is too busy to answer now (a 503 with Retry-After); the
    message says which."""


UNREACHABLE = (ServiceUnavailable, SessionExpired)
BUSY = (ConnectionAcquisitionTimeoutError, TransientError)


class Breaker:
    """Fail fast while Neo4j is down. After a call found it unreachable the breaker is open:
    every call raises :class:`GraphUnavailable` at once, and a background thread probes
    Neo4j every ``backoff`` seconds (``probe``: a query on the database, so a server that
    is still starting does not count); once one answers, ``warm`` prepares the database for
    traffic (plans the most used statements) and the breaker closes; ``settle`` then finishes
    in the background (plans the rest). No request ever waits on a probe or the warm-up: they
    are refused at once until the breaker closes."""

    def __init__(
        self,
        uri: str,
        backoff: float,
        probe: Callable[[], None],
        warm: Callable[[], None] | None = None,
        settle: Callable[[], None] | None = None,
    ) -> None:
        self.uri = uri
        self.backoff = backoff
        self._probe_once = probe
        self._warm = warm
        self._settle = settle
        self._warming = False
        self._open = False
        self._lock = threading.Lock()
        self._stopped = threading.Event()

    @property
    def is_open(self) -> bool:
        return self._open

    def trip(self, exc: BaseException | str) -> GraphUnavailable:
        """Open the breaker (Neo4j was found unreachable) and start probing it."""
        with self._lock:
            if not self._open and not self._stopped.is_set():
                self._open = True
                threading.Thread(target=self._probe_until_closed, daemon=True).start()
        return GraphUnavailable(f"Neo4j is not reachable at {self.uri}: {exc}")

    def _probe_until_closed(self) -> None:
        while not self._stopped.wait(self.backoff):
            if self.reachable() and self._warmed():
                with self._lock:
                    self._open = False
                if self._settle is not None:
                    with contextlib.suppress(Exception):  # best effort, requests flow again
                        self._settle()
                return

    def _warmed(self) -> bool:
        """Run the warm-up (if any); False when Neo4j failed during it."""
        if self._warm is None:
            return True
        self._warming = True
        try:
            self._warm()
        except Exception:  # Neo4j went away again: keep probing
            return False
        finally:
            self._warming = False
        return True

    def stop(self) -> None:
        """No more probes (the store is closing)."""
        self._stopped.set()

    def reachable(self) -> bool:
        """One probe now."""
        try:
            self._probe_once()
        except Exception:  # whatever stops the probe, Neo4j did not answer it
            return False
        return True

    @contextmanager
    def guard(self) -> Iterator[None]:
        if self._open:
            if self._warming:
                raise GraphUnavailable(f"Neo4j at {self.uri} is back and warming up; retry shortly")
            raise GraphUnavailable(f"Neo4j at {self.uri} is unreachable; retry shortly")
        try:
            yield
        except UNREACHABLE as exc:
            raise self.trip(exc) from exc
        except BUSY as exc:
            raise GraphUnavailable(f"Neo4j is busy ({type(exc).__name__}): {exc}") from exc

    def run(self, attempt: Callable[[], T], retry_time: float, first_delay: float) -> T:
        """``attempt()`` (one whole transaction) under the breaker, retried while that can
        help: a transient error (a deadlock) after a growing, jittered delay; a lost connection
        at once, if a fresh probe reaches Neo4j (a stale pooled connection after a restart).
        Retries stop after ``retry_time`` seconds, and at once when the breaker is open."""
        give_up = time.monotonic() + retry_time
        delay = first_delay
        while True:
            with self.guard():
                try:
                    return attempt()
                except UNREACHABLE as exc:
                    if self._open or not exc.is_retryable() or not self.reachable():
                        raise  # the guard opens the breaker: GraphUnavailable
                    wait = 0.0
                except (Neo4jError, DriverError) as exc:
                    if self._open or not exc.is_retryable() or time.monotonic() + delay > give_up:
                        raise
                    wait = delay * random.uniform(0.8, 1.2)
                    delay *= 2
            if time.monotonic() + wait > give_up:
                raise GraphUnavailable(f"Neo4j did not complete the request in {retry_time} s")
            time.sleep(wait)
