"""Plans ready before traffic returns after a Neo4j restart.

A restarted Neo4j has an empty query-plan cache and a cold JVM: planning the larger statements
(recall candidates, the session write) then takes seconds each, and every request waits for it
inside the database. The store remembers each statement it ran with the shape of its parameters
(strings cut, lists cut to their first items: the plan cache keys on the statement and the
parameter types, not the values), and the breaker has the most run of them planned with
``EXPLAIN`` (nothing runs) before it lets requests through again, meanwhile refusing them with
a fast 503, and the rest right after, in the background.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

#: Parameter shapes kept per statement: lists cut to this many items, strings to this length.
LIST_ITEMS = 2
STRING_CHARS = 64


def shape(value: Any) -> Any:
    """``value`` cut to its shape: the same types, little of the data."""
    if isinstance(value, str):
        return value[:STRING_CHARS]
    if isinstance(value, list | tuple):
        return [shape(v) for v in value[:LIST_ITEMS]]
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
        at a time, for at most ``budget_s`` seconds; the keys of those tried (``explain`` says
        False for a statement that did not plan; it raises when Neo4j is gone, and that ends
        the warm-up)."""
        with self._lock:
            keys = sorted((k for k in self._seen if k not in skip), key=lambda k: -self._runs[k])
            todo = iter([(key, self._seen[key]) for key in keys])
        give_up = time.monotonic() + budget_s
        take = threading.Lock()
        tried: list[Key] = []

        def worker() -> None:
            while time.monotonic() <= give_up:
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
