"""Metrics read when ``/metrics`` is scraped rather than counted as things happen: job runs
(recorded in the graph, so the scheduler's count as well as the API's), GDS in-memory graphs
(the catalog) and the Neo4j driver's connection pool. A source that cannot be read (Neo4j down,
GDS missing) leaves its metrics out of that scrape and logs why; the scrape still answers."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import neo4j
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from pipelines.consolidate import graph_budget, graph_catalog
from pipelines.consolidate.config import DEFAULT_CONSOLIDATION_CONFIG
from pipelines.graph import GraphStore, GraphUnavailable

log = logging.getLogger("mnemograph.metrics")

#: Upper bounds (seconds) of the job duration histogram: jobs take from milliseconds (a small
#: space's decay) to many minutes (communities of a large space).
JOB_BUCKETS = (0.1, 0.5, 1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 3600.0)

StoreSource = Callable[[], GraphStore | None]


def _read(store: StoreSource, statement: str, **params: Any) -> list[dict[str, Any]] | None:
    graph = store()
    if graph is None:
        return None
    try:
        return graph.read(statement, **params)
    except (GraphUnavailable, neo4j.exceptions.Neo4jError) as exc:
        log.warning("metrics from %s skipped: %s", statement, exc)
        return None


class JobRunCollector(Collector):
    """``mnemograph_job_runs_total{job,status}`` and the histogram
    ``mnemograph_job_duration_seconds{job}``, bucketed by the database from the recorded runs."""

    def __init__(self, store: StoreSource) -> None:
        self._store = store

    def collect(self) -> Iterator[Metric]:
        runs = CounterMetricFamily(
            "mnemograph_job_runs", "Recorded consolidation job runs", labels=["job", "status"]
        )
        seconds = HistogramMetricFamily(
            "mnemograph_job_duration_seconds", "Durations of recorded job runs", labels=["job"]
        )
        bounds_ms = [b * 1000.0 for b in JOB_BUCKETS]
        rows = _read(self._store, "metrics/job_runs", bounds_ms=bounds_ms) or []
        per_job: dict[str, tuple[list[float], float, float]] = {}
        for row in rows:
            job, status = str(row["job"]), str(row["status"])
            runs.add_metric([job, status], float(row["runs"]))
            buckets, count, total = per_job.get(job, ([0.0] * len(bounds_ms), 0.0, 0.0))
            below = [a + float(b) for a, b in zip(buckets, row["at_most"], strict=True)]
            per_job[job] = (below, count + float(row["runs"]), total + float(row["duration_ms"]))
        for job, (buckets, count, total_ms) in sorted(per_job.items()):
            le = [(str(b), n) for b, n in zip(JOB_BUCKETS, buckets, strict=True)]
            seconds.add_metric([job], [*le, ("+Inf", count)], sum_value=total_ms / 1000.0)
        yield runs
        yield seconds


class GdsCollector(Collector):
    """``mnemograph_gds_projections`` (in-memory graphs held), ``mnemograph_gds_projection_bytes``
    (their size), ``mnemograph_neo4j_heap_max_bytes`` (the JVM's maximum heap),
    ``mnemograph_gds_budget_bytes`` (the projection budget of
    :mod:`pipelines.consolidate.graph_budget` under the default configuration, derived from
    the configured heap), ``mnemograph_gds_projections_evicted_total{reason}`` (this
    process's evictions: ``room`` for a projection that would not fit, ``idle`` by age) and
    ``mnemograph_gds_projections_refused_total{reason}`` (this process's refusals for the
    budget: ``too_large``, ``in_use``)."""

    def __init__(self, store: StoreSource) -> None:
        self._store = store

    def collect(self) -> Iterator[Metric]:
        evicted = CounterMetricFamily(
            "mnemograph_gds_projections_evicted", "GDS projections this process evicted",
            labels=["reason"],
        )  # fmt: skip
        counts = graph_catalog.evictions()
        for reason in ("room", "idle"):
            evicted.add_metric([reason], float(counts.get(reason, 0)))
        yield evicted
        refused = CounterMetricFamily(
            "mnemograph_gds_projections_refused",
            "GDS projections this process refused for the memory budget", labels=["reason"],
        )  # fmt: skip
        for reason, count in graph_budget.refusals().items():
            refused.add_metric([reason], float(count))
        yield refused
        rows = _read(self._store, "metrics/gds_graphs")
        if not rows:
            return
        row = rows[0]
        yield GaugeMetricFamily(
            "mnemograph_gds_projections", "GDS in-memory graphs held", value=float(row["graphs"])
        )
        yield GaugeMetricFamily(
            "mnemograph_gds_projection_bytes", "Heap held by GDS in-memory graphs",
            value=float(row["bytes"]),
        )  # fmt: skip
        yield GaugeMetricFamily(
            "mnemograph_neo4j_heap_max_bytes", "Neo4j's maximum heap",
            value=float(row["heap_max"]),
        )  # fmt: skip
        budget = _budget(self._store, float(row["heap_max"]))
        if budget is not None:
            yield GaugeMetricFamily(
                "mnemograph_gds_budget_bytes",
                "Heap the GDS projections may hold together (default configuration)",
                value=budget,
            )


def _budget(store: StoreSource, jvm_heap: float) -> float | None:
    graph = store()
    if graph is None:
        return None
    try:
        return graph_budget.budget_bytes(graph, DEFAULT_CONSOLIDATION_CONFIG.upkeep, jvm_heap)
    except (GraphUnavailable, neo4j.exceptions.Neo4jError, ValueError) as exc:
        log.warning("the GDS budget is left out of this scrape: %s", exc)
        return None


def pool_state(driver: Any) -> tuple[int, int, int] | None:
    """(in use, idle, maximum) connections of the driver's pool, or None when the driver does
    not have the shape this reads. The Python driver publishes no pool metrics, so this reads
    its pool's ``connections`` (address -> connections with ``in_use``) and its configured
    maximum, and gives up quietly if a driver version lays them out otherwise."""
    pool = getattr(driver, "_pool", None)
    connections = getattr(pool, "connections", None)
    config = getattr(pool, "pool_config", None)
    maximum = getattr(config, "max_connection_pool_size", None)
    if not isinstance(connections, dict) or not isinstance(maximum, int):
        return None
    try:
        flags = [bool(c.in_use) for conns in list(connections.values()) for c in list(conns)]
    except (AttributeError, RuntimeError):  # a layout change, or the pool changed mid-read
        return None
    in_use = sum(flags)
    return in_use, len(flags) - in_use, maximum


class PoolCollector(Collector):
    """``mnemograph_neo4j_pool_connections{state="in_use"|"idle"}`` and
    ``mnemograph_neo4j_pool_max_connections``."""

    def __init__(self, store: StoreSource) -> None:
        self._store = store

    def collect(self) -> Iterator[Metric]:
        graph = self._store()
        state = pool_state(graph.driver) if graph is not None else None
        if state is None:
            return
        in_use, idle, maximum = state
        family = GaugeMetricFamily(
            "mnemograph_neo4j_pool_connections", "Neo4j driver connections by state",
            labels=["state"],
        )  # fmt: skip
        family.add_metric(["in_use"], float(in_use))
        family.add_metric(["idle"], float(idle))
        yield family
        yield GaugeMetricFamily(
            "mnemograph_neo4j_pool_max_connections", "Neo4j driver pool size limit",
            value=float(maximum),
        )  # fmt: skip
