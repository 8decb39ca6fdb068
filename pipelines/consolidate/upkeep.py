"""Graph upkeep: co-occurrence weights and the projected entity graph used by PageRank.

* **Co-occurrence weights.** Ingest adds to ``CO_OCCURS.weight`` as memories arrive; merges,
  supersessions and retention change which memories count. The job recounts, for every pair
  of entities, the number of *active* memories mentioning both, fixes the edges that differ
  and deletes those no active memory supports. Only differences are written, so a second run
  writes nothing.
* **Projected entity graph.** :func:`ensure_entity_projection` returns the name of a GDS
  in-memory graph of the space's entities (every one, isolated ones too) with ``CO_OCCURS`` as
  undirected relationships weighted by ``weight``. The name embeds a fingerprint of the entity
  graph (entity count, total mentions, latest mention, and ``Space.entity_graph_version``, which
  this job bumps when it rewrites weights), so a stale projection is never reused: a new one is
  projected under the new name and superseded ones are dropped after a grace period (readers
  may still be walking them). One caller per space and process projects at a time; callers
  in other processes may project the same name at once: GDS keeps one graph and refuses the
  other caller, which uses it (:func:`build_entity_projection`).

The assembler's Personalized PageRank calls :func:`ensure_entity_projection` before every walk:
one aggregate over the space's entities (the fingerprint) and, at most every
``projection_recheck_seconds`` per projection and process, the existence check and the clean-up.
Each call records a use of the projection; a projection that would not fit the memory budget
evicts idle ones of other spaces first, and idle ones are dropped by age
(:mod:`~pipelines.consolidate.graph_catalog`).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import defaultdict

from neo4j.exceptions import ClientError

from pipelines import spaces
from pipelines.consolidate import graph_budget, graph_catalog
from pipelines.consolidate.config import DEFAULT_CONSOLIDATION_CONFIG, UpkeepConfig
from pipelines.consolidate.context import JobContext
from pipelines.engine import Engine

log = logging.getLogger("mnemograph.consolidate.upkeep")

ENTITY_GRAPH_PREFIX = "mnemograph/entities/"

_locks: dict[str, threading.Lock] = defaultdict(threading.Lock)
_locks_guard = threading.Lock()
# (database uri, database, space) -> (projection name, monotonic time it was found or made)
_verified: dict[tuple[str, str | None, str], tuple[str, float]] = {}


def _lock(space: str) -> threading.Lock:
    with _locks_guard:
        return _locks[space]


def _lease_live(ctx: JobContext, job: str) -> bool:
    """Whether a runner of ``job`` holds a live lease in the space (its graph may be in use)."""
    rows = ctx.store.read("consolidate/lease_get", space=ctx.space, job=job)
    return bool(rows) and not rows[0]["expired"]


def entity_graph_prefix(space: str) -> str:
    """Every projection of ``space`` starts with this (``/`` cannot occur in a space id)."""
    return f"{ENTITY_GRAPH_PREFIX}{space}/"


def entity_graph_name(engine: Engine, space: str) -> str | None:
    """The projection name for the space's entity graph as it is now (None: no entities)."""
    row = engine.store.read("consolidate/entity_graph_fingerprint", space=space)
    if not row or not row[0]["entities"]:
        return None
    r = row[0]
    raw = f"{r['entities']}|{r['mentions']}|{r['last_seen']}|{r['version']}"
    return entity_graph_prefix(space) + hashlib.sha1(raw.encode()).hexdigest()[:16]


def drop_stale_graphs(engine: Engine, prefix: str, keep: str | None, grace_seconds: float) -> int:
    """Drop projections named ``prefix...`` other than ``keep`` older than the grace period."""
    dropped = 0
    for g in engine.store.read("consolidate/graph_list_prefix", prefix=prefix):
        if g["graph"] != keep and g["age_seconds"] >= grace_seconds:
            graph_catalog.drop(engine.store, g["graph"])
            dropped += 1
    return dropped


def build_entity_projection(engine: Engine, space: str, name: str) -> None:
    """Project the space's entity graph as ``name``. When another process projects the same
    name at once, GDS keeps one and refuses the other, either at the start ("already exists")
    or, when both were built side by side, at registration ("already loaded"); the refused
    caller uses the graph that was kept."""
    try:
        # a READ transaction: projecting reads the database and writes only the GDS catalog
        engine.store.read("consolidate/entity_graph_project", space=space, graph=name)
    except ClientError:
        if not engine.store.read("consolidate/graph_exists", graph=name)[0]["exists"]:
            raise


def ensure_entity_projection(
    engine: Engine, space: str, config: UpkeepConfig = DEFAULT_CONSOLIDATION_CONFIG.upkeep
) -> str | None:
    """Name of an up-to-date GDS projection of the space's entity co-occurrence graph.

    Nodes: every ``Entity`` of the space (``gds.util.asNode(nodeId).key`` gives its key).
    Relationships: ``CO_OCCURS`` with weight > 0, undirected, property ``weight`` (float).
    Projects it when missing or stale. Returns ``None`` when the space has no entities.
    """
    name = entity_graph_name(engine, space)
    if name is None:
        return None
    key = _verified_key(engine, space)
    trusted_name, since = _verified.get(key, (None, 0.0))
    fresh = time.monotonic() - since < config.projection_recheck_seconds
    if trusted_name == name and fresh and graph_catalog.tracked(engine.store, name):
        graph_catalog.note_use(engine.store, name)
        _sweep(engine, config)
        return name
    with _lock(space):
        graph_catalog.note_use(engine.store, name)  # from now on, eviction leaves it alone
        if not engine.store.read("consolidate/graph_exists", graph=name)[0]["exists"]:
            graph_budget.require_room(
                engine.store,
                "the entity graph",
                "consolidate/entity_graph_size",
                space,
                config,
                keep=name,
            )
            build_entity_projection(engine, space, name)
        try:
            drop_stale_graphs(
                engine, entity_graph_prefix(space), name, config.stale_graph_grace_seconds
            )
        except Exception:  # cleaning up is best effort; the projection is what was asked for
            log.warning("could not drop stale projections of %s", space, exc_info=True)
        _verified[key] = (name, time.monotonic())
    _sweep(engine, config)
    return name


def _sweep(engine: Engine, config: UpkeepConfig) -> None:
    """Drop idle projections (at most once per ``projection_sweep_seconds``); best effort."""
    try:
        graph_catalog.sweep_idle(
            engine.store,
            config.max_idle_seconds,
            config.projection_sweep_seconds,
            config.projection_evict_grace_seconds,
        )
    except Exception:
        log.warning("could not look for idle projections", exc_info=True)


def forget_entity_projection(engine: Engine, space: str) -> None:
    """Stop trusting the space's projection (a walk over it failed): the next
    :func:`ensure_entity_projection` checks it again and projects it when it is gone."""
    _verified.pop(_verified_key(engine, space), None)


def _verified_key(engine: Engine, space: str) -> tuple[str, str | None, str]:
    cfg = engine.store.config
    return (cfg.uri, cfg.database, space)


def run(ctx: JobContext) -> None:
    cfg = ctx.config.upkeep
    after = ""
    changed = 0
    while True:
        keys = [
            r["key"]
            for r in ctx.store.read(
                "consolidate/cooccurrence_entities",
                space=ctx.space,
                after=after,
                limit=cfg.entity_batch,
            )
        ]
        if not keys:
            break
        after = keys[-1]
        diffs = ctx.store.read("consolidate/cooccurrence_count", space=ctx.space, keys=keys)
        to_set = [{"a": d["a"], "b": d["b"], "w": d["counted"]} for d in diffs if d["counted"]]
        to_delete = [{"a": d["a"], "b": d["b"]} for d in diffs if not d["counted"]]
        ctx.counts["entities"] += len(keys)
        ctx.counts["weights_set" if not ctx.dry_run else "weights_to_set"] += len(to_set)
        ctx.counts["edges_deleted" if not ctx.dry_run else "edges_to_delete"] += len(to_delete)
        for d in diffs[:5]:
            ctx.note({"a": d["a"], "b": d["b"], "weight": d["counted"], "was": d["stored"]})
        if (to_set or to_delete) and not ctx.dry_run:
            spaces.write_locked(
                ctx.store, ctx.space, "consolidate/cooccurrence_write", set=to_set, delete=to_delete
            )
            changed += len(to_set) + len(to_delete)
        ctx.checkpoint(f"upkeep:cooccurrence:{after}")
    if ctx.dry_run:
        name = entity_graph_name(ctx.engine, ctx.space)
        exists = (
            name is not None and ctx.store.read("consolidate/graph_exists", graph=name)[0]["exists"]
        )
        ctx.counts["projection_stale"] = int(name is not None and not exists)
        return
    if changed:
        spaces.write_locked(
            ctx.store,
            ctx.space,
            "consolidate/entity_graph_bump",
        )
    name = ensure_entity_projection(ctx.engine, ctx.space, cfg)
    ctx.counts["projection"] = int(name is not None)
    ctx.counts["leftover_graphs_dropped"] = sum(
        drop_stale_graphs(ctx.engine, f"{prefix}{ctx.space}/", None, cfg.stale_graph_grace_seconds)
        for prefix, job in graph_catalog.RUN_GRAPH_JOBS.items()
        if not _lease_live(ctx, job)
    )
    if name is not None:
        ctx.note({"projection": name})
