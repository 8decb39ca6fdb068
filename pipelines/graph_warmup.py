"""Plans ready before traffic returns after a Neo4j restart.

A restarted Neo4j has an empty query-plan cache and a cold JVM: planning the larger statements
(recall candidates, the session write) then takes seconds each, and every request waits for it
inside the database. The store remembers each statement it ran with the shape of its parameters
(their types and length buckets, no values: the plan cache keys on the statement and those), and the
breaker has the most run of them planned with ``EXPLAIN`` (nothing runs) before it lets requests
through again, meanwhile refusing them with a fast 503, and the rest right after, in the
background.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime
from typing import Any

#: The longest string or list a shape keeps (its length's bucket, see :func:`bucket_size`).
MAX_SIZE = 10_001

_EPOCH = datetime(1970, 1, 1)


def bucket_size(n: int) -> int:
    """The smallest length in ``n``'s bucket of the plan cache: it tells lengths apart by
    power of ten (0, 1, 2-10, 11-100, 101-1,000, …), so a string of 54 characters and one of
    11 share plans, one of 101 does not."""
    if n <= 1:
        return n
    return min(MAX_SIZE, int(10 ** (len(str(n - 1)) - 1)) + 1)


def shape(value: Any) -> Any:
    """``value`` reduced to its shape: the same types and length buckets, none of the data (a
    string is x's, a number zero, a time the epoch, a list its first item's shape repeated),
    so the warmer keeps nothing of what a space holds (its erasure leaves no trace here)."""
    if isinstance(value, str):
        return "x" * bucket_size(len(value))
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return type(value)(0)
    if isinstance(value, bytes):
        return b"x" * bucket_size(len(value))
    if isinstance(value, datetime):
        return _EPOCH.replace(tzinfo=value.tzinfo)
    if isinstance(value, date):
        return _EPOCH.date()
    if isinstance(value, list | tuple):
        return [shape(value[0])] * bucket_size(len(value)) if value else []
    if isinstance(value, Mapping):
        return {k: shape(v) for k, v in value.items()}
    return value


def kind(value: Any) -> Any:
    """What the plan cache tells ``value`` apart by: its type, and for a list the type of its
    first item (``None`` and a value are different plans)."""
    if isinstance(value, list | tuple):
        return (list, kind(value[0]) if value else None)
    return type(value)


#: A statement and the types of its parameters: what the plan cache tells apart.
Key = tuple[str, tuple[tuple[str, Any], ...]]


class PlanWarmer:
    """The statements a store has run, each with the shape of its parameters and how often it
    ran, once per combination of parameter types (at most ``limit`` of them)."""

    def __init__(self, limit: int = 512) -> None:
        self.limit = limit
        self._seen: dict[Key, dict[str, Any]] = {}
        self._runs: dict[Key, int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._seen)

    def note(self, text: str, params: Mapping[str, Any]) -> None:
        key = (text, tuple((k, kind(v)) for k, v in params.items()))
        if key in self._seen:
            self._runs[key] += 1  # a lost count under a race does no harm
            return
        if len(self._seen) >= self.limit:
            return
        shaped = {k: shape(v) for k, v in params.items()}
        with self._lock:
            if len(self._seen) < self.limit:
                self._runs.setdefault(key, 1)  # first: a key in _seen has its count
                self._seen.setdefault(key, shaped)

    def warm(
        self,
        explain: Callable[[str, dict[str, Any]], bool],
        budget_s: float,
        workers: int = 2,
        skip: Collection[Key] = (),
    ) -> list[Key]:
        """``explain`` the remembered statements but ``skip``, the most run first, ``workers``
        at a time, for at most ``budget_s`` seconds (checked before each statement but a
        worker's first); the keys of those tried (``explain`` says False for a statement that
        did not plan; it raises when Neo4j is gone, and that ends the warm-up)."""
        with self._lock:
            keys = sorted((k for k in self._seen if k not in skip), key=lambda k: -self._runs[k])
            todo = iter([(key, self._seen[key]) for key in keys])
        give_up = time.monotonic() + budget_s
        take = threading.Lock()
        tried: list[Key] = []

        def worker() -> None:
            first = True  # each worker tries one statement however late it starts
            while first or time.monotonic() <= give_up:
                first = False
                with take:
                    job = next(todo, None)
                if job is None:
                    return
                key, params = job
                explain(key[0], params)
                with take:
                    tried.append(key)

        with ThreadPoolExecutor(max(1, workers), thread_name_prefix="plan-warmup") as pool:
            for future in [pool.submit(worker) for _ in range(max(1, workers))]:
                future.result()
        return tried
