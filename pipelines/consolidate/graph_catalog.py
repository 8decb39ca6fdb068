"""Mnemograph's GDS projections in the catalog: when each was last used, and their eviction.

GDS keeps an in-memory graph until it is dropped and records when it was made, never when it
was last read. So each process records the uses it makes (:func:`note_use`, on every
``ensure_entity_projection``), and a projection counts as used at the later of its last use
recorded here and its creation (a projection another process walks is known here by its
creation only; if this process evicts it, that process's next walk fails, and it projects the
graph again).

Eviction drops projections under Mnemograph's own prefixes, least recently used first, and
never one used within ``grace`` (a walk may be reading it) nor one a live job's lease holds
(a community run's graph):

* for room (:func:`evict`): a projection that would not fit the budget evicts others until it
  fits; when all the evictable ones together would not make room, none is dropped;
* by age (:func:`sweep_idle`): projections idle longer than ``max_idle``, looked for at most
  once per ``every`` seconds per process.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pipelines import spaces
from pipelines.graph import GraphStore

log = logging.getLogger("mnemograph.consolidate.graphs")

#: Per-run projections by prefix -> the job whose live lease holds them.
RUN_GRAPH_JOBS = {"mnemograph/communities/": "communities"}

#: Wall-clock seconds (a module attribute, so a test can move time on).
clock = time.time

_Key = tuple[str, str | None, str]  # (database uri, database, graph name)
_guard = threading.Lock()
_used: dict[_Key, float] = {}
_last_sweep: dict[tuple[str, str | None], float] = {}
_evicted: Counter[str] = Counter()


@dataclass(frozen=True, slots=True)
class Projection:
    name: str
    bytes: int
    last_used: float  # wall-clock seconds: the later of its last recorded use and its creation
    held: bool  # a live job's lease holds it


def _store_key(store: GraphStore) -> tuple[str, str | None]:
    return (store.config.uri, store.config.database)


def note_use(store: GraphStore, name: str) -> None:
    """Record that ``name`` is about to be read (it is not evicted within the grace period)."""
    with _guard:
        _used[(*_store_key(store), name)] = clock()


def tracked(store: GraphStore, name: str) -> bool:
    """Whether this process has recorded a use of ``name`` and has not dropped it since."""
    with _guard:
        return (*_store_key(store), name) in _used


def drop(store: GraphStore, name: str, reason: str | None = None) -> None:
    """Drop ``name`` (missing: nothing happens); ``reason`` counts it as an eviction."""
    store.read("consolidate/graph_drop", graph=name)  # the GDS catalog only: no database write
    with _guard:
        _used.pop((*_store_key(store), name), None)
        if reason is not None:
            _evicted[reason] += 1


def evictions() -> dict[str, int]:
    """Projections this process evicted, by reason (``room``, ``idle``)."""
    with _guard:
        return dict(_evicted)


def _held(store: GraphStore, name: str) -> bool:
    for prefix, job in RUN_GRAPH_JOBS.items():
        if name.startswith(prefix):
            space = name[len(prefix) :].split("/", 1)[0]
            rows = store.read("consolidate/lease_get", space=space, job=job)
            return bool(rows) and not rows[0]["expired"]
    return False


def projections(store: GraphStore) -> list[Projection]:
    """Mnemograph's projections in the catalog now (uses of graphs no longer there are
    forgotten)."""
    rows = store.read("consolidate/graph_catalog", prefixes=list(spaces.PROJECTION_PREFIXES))
    uri, database = _store_key(store)
    names = {str(r["graph"]) for r in rows}
    with _guard:
        for key in [k for k in _used if k[:2] == (uri, database) and k[2] not in names]:
            del _used[key]
        used = {k[2]: t for k, t in _used.items() if k[:2] == (uri, database)}
    return [
        Projection(
            name=str(r["graph"]),
            bytes=int(r["bytes"]),
            last_used=max(used.get(str(r["graph"]), 0.0), int(r["created_ms"]) / 1000.0),
            held=_held(store, str(r["graph"])),
        )
        for r in rows
    ]


def plan_eviction(
    graphs: Sequence[Projection], excess: float, grace: float, now: float, keep: str | None
) -> list[Projection] | None:
    """The least recently used evictable projections that free at least ``excess`` bytes, or
    None when all of them together would not (pure)."""
    evictable = sorted(
        (g for g in graphs if g.name != keep and not g.held and now - g.last_used >= grace),
        key=lambda g: (g.last_used, g.name),
    )
    chosen: list[Projection] = []
    freed = 0
    for g in evictable:
        if freed >= excess:
            break
        chosen.append(g)
        freed += g.bytes
    return chosen if freed >= excess else None


def evict(store: GraphStore, excess: float, grace: float, keep: str | None) -> int | None:
    """Drop least recently used projections (other than ``keep``) to free ``excess`` bytes;
    the number dropped, or None (nothing dropped) when that much cannot be freed."""
    chosen = plan_eviction(projections(store), excess, grace, clock(), keep)
    if chosen is None:
        return None
    for g in chosen:
        log.info("evicting projection %s (%d bytes) to make room", g.name, g.bytes)
        drop(store, g.name, "room")
    return len(chosen)


def sweep_idle(store: GraphStore, max_idle: float | None, every: float, grace: float) -> int:
    """Drop projections idle for ``max_idle`` seconds (at least ``grace``), at most once per
    ``every`` seconds per process and database; the number dropped."""
    if max_idle is None:
        return 0
    now = clock()
    with _guard:
        if now - _last_sweep.get(_store_key(store), float("-inf")) < every:
            return 0
        _last_sweep[_store_key(store)] = now
    idle = [
        g for g in projections(store) if not g.held and now - g.last_used >= max(max_idle, grace)
    ]
    for g in idle:
        log.info("dropping projection %s, idle for %.0f s", g.name, now - g.last_used)
        drop(store, g.name, "idle")
    return len(idle)
