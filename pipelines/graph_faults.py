"""How the store behaves when Neo4j fails: a breaker that answers at once while Neo4j is
unreachable, and the one retry loop of every transaction, which stops as soon as the breaker
knows Neo4j is down (so a request in flight never waits out blind retries)."""

from __future__ import annotations

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
    """Fail fast while Neo4j is down: after a call found it unreachable, calls raise
    :class:`GraphUnavailable` at once; every ``backoff`` seconds one of them first probes
    Neo4j (one connection attempt, no retries) and goes through when it answers."""

    def __init__(self, uri: str, backoff: float, probe: Callable[[], None]) -> None:
        self.uri = uri
        self.backoff = backoff
        self._probe_once = probe
        self._open_until = 0.0  # 0: closed
        self._probe = threading.Lock()

    @property
    def is_open(self) -> bool:
        return self._open_until != 0.0

    def _reopen(self, exc: BaseException) -> GraphUnavailable:
        self._open_until = time.monotonic() + self.backoff
        return GraphUnavailable(f"Neo4j is not reachable at {self.uri}: {exc}")

    def reachable(self) -> bool:
        """One probe now (after a lost connection: a stale pooled one, or Neo4j gone?)."""
        try:
            self._probe_once()
        except (*UNREACHABLE, OSError):
            return False
        return True

    @contextmanager
    def guard(self) -> Iterator[None]:
        probing = False
        if self._open_until:
            if time.monotonic() < self._open_until or not self._probe.acquire(blocking=False):
                raise GraphUnavailable(f"Neo4j at {self.uri} is unreachable; retry shortly")
            probing = True
            try:
                self._probe_once()
            except (*UNREACHABLE, OSError) as exc:
                self._probe.release()
                raise self._reopen(exc) from exc
        try:
            yield
        except UNREACHABLE as exc:
            raise self._reopen(exc) from exc
        except BUSY as exc:
            self._open_until = 0.0
            raise GraphUnavailable(f"Neo4j is busy ({type(exc).__name__}): {exc}") from exc
        except BaseException:
            self._open_until = 0.0  # it answered (the error is the caller's)
            raise
        else:
            self._open_until = 0.0
        finally:
            if probing:
                self._probe.release()

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
                    if not exc.is_retryable() or not self.reachable():
                        raise  # the guard opens the breaker: GraphUnavailable
                    wait = 0.0
                except (Neo4jError, DriverError) as exc:
                    if not exc.is_retryable() or time.monotonic() + delay > give_up:
                        raise
                    wait = delay * random.uniform(0.8, 1.2)
                    delay *= 2
            if time.monotonic() + wait > give_up:
                raise GraphUnavailable(f"Neo4j did not complete the request in {retry_time} s")
            time.sleep(wait)
