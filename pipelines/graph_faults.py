"""How the store behaves when Neo4j fails: a breaker that answers at once while Neo4j is
unreachable (a liveness probe opens it when Neo4j dies, before any call fails), the one retry
loop of every transaction, which stops as soon as the breaker knows Neo4j is down (so a request
in flight never waits out blind retries), and the record of whether a failed request may have
committed a write."""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
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
    message says which. ``may_have_committed``: the failure came while a write transaction
    was committing, so its outcome is unknown (false: nothing of that transaction was
    written)."""

    def __init__(self, message: str, may_have_committed: bool = False) -> None:
        super().__init__(message)
        self.may_have_committed = may_have_committed


# ----------------------------------------------------------- whether a failure may have written
# What every 503 tells its client. Two sources, joined by the HTTP layer: the failure itself
# (an exception the store marks when the connection was lost while a write transaction was
# committing, :func:`mark`) and the request's record of the write transactions it committed
# before it failed (an import, a job, several session groups): a context variable the HTTP
# layer opens per request (:func:`tracking`), shared by its worker threads
# (``run_in_threadpool`` copies the context; the record is one mutable object).

_ATTRIBUTE = "may_have_committed"


@dataclass
class WriteLog:
    """What one request wrote: ``committed`` once a write transaction of it committed (or
    its commit's outcome is unknown)."""

    committed: bool = False
    #: time.monotonic() the request started, when its Neo4j work has a budget while the
    #: store recovers from a restart (``None``: no budget, a job run)
    started: float | None = None


_current: ContextVar[WriteLog | None] = ContextVar("mnemograph_write_log", default=None)


@contextmanager
def tracking(started: float | None = None) -> Iterator[WriteLog]:
    """A fresh record for the code run inside (one request, started at ``started``)."""
    log = WriteLog(started=started)
    token = _current.set(log)
    try:
        yield log
    finally:
        _current.reset(token)


def note_commit() -> None:
    """A write transaction of the current request committed, or may have."""
    log = _current.get()
    if log is not None:
        log.committed = True


def request_committed() -> bool:
    log = _current.get()
    return log is not None and log.committed


def request_started() -> float | None:
    """When the current request started (``None``: none, or one without a budget)."""
    log = _current.get()
    return None if log is None else log.started


def mark(exc: BaseException, may_have_committed: bool = True) -> BaseException:
    """Record on ``exc`` whether the work it stopped may have committed (sticky: once true,
    it stays true)."""
    if may_have_committed or not hasattr(exc, _ATTRIBUTE):
        with contextlib.suppress(AttributeError):  # a type that takes no attributes
            setattr(exc, _ATTRIBUTE, bool(getattr(exc, _ATTRIBUTE, False)) or may_have_committed)
    return exc


def marked(exc: BaseException) -> bool | None:
    """What ``exc`` says (``None``: nothing was recorded on it)."""
    value = getattr(exc, _ATTRIBUTE, None)
    return None if value is None else bool(value)


# ----------------------------------------------------------- the breaker

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
        recovering_s: float = 0.0,
    ) -> None:
        self.uri = uri
        self.backoff = backoff
        self._probe_once = probe
        self._warm = warm
        self._settle = settle
        self._recovering_s = recovering_s
        self._recovered_at = 0.0  # time.monotonic() until which the breaker is recovering
        self._settling = False
        self._warming = False
        self._open = False
        self._lock = threading.Lock()
        self._stopped = threading.Event()

    @property
    def is_open(self) -> bool:
        return self._open

    @property
    def recovering(self) -> bool:
        """The breaker closed again within the last ``recovering_s`` seconds, or the rest of
        the statements are still being planned."""
        return self._settling or time.monotonic() < self._recovered_at

    def watch(self, every: float) -> None:
        """Probe Neo4j every ``every`` seconds while the breaker is closed and open it when
        Neo4j is found unreachable, though no call failed yet (work in flight that checks the
        breaker between its steps then stops at once, not at its next statement)."""

        def loop() -> None:
            while not self._stopped.wait(every):
                if self._open:
                    continue
                found = self._unreachable()
                # twice in a row: one failure may be a single stale pooled connection
                unreachable = found is not None and self._unreachable() is not None
                if unreachable and found is not None and not self._stopped.is_set():
                    self.trip(found)

        threading.Thread(target=loop, name="neo4j-liveness", daemon=True).start()

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
                    self._recovered_at = time.monotonic() + self._recovering_s
                    self._settling = self._settle is not None
                    self._open = False
                if self._settle is not None:
                    try:
                        with contextlib.suppress(Exception):  # best effort, requests flow
                            self._settle()
                    finally:
                        self._settling = False
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

    def _unreachable(self) -> BaseException | None:
        """One probe now: what says Neo4j is unreachable, or ``None`` (it answered, or was
        busy or slow: not a reason to refuse traffic)."""
        try:
            self._probe_once()
        except UNREACHABLE as exc:
            return exc
        except Exception:
            return None
        return None

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
            raise mark(self.trip(exc), bool(marked(exc))) from exc
        except BUSY as exc:
            busy = GraphUnavailable(f"Neo4j is busy ({type(exc).__name__}): {exc}")
            raise mark(busy, bool(marked(exc))) from exc

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
