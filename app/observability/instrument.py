"""Metering the services without changing them: thin proxies around the ingestor and the
recaller, and a collector that reads job runs from the graph when ``/metrics`` is scraped
(so runs of the scheduler count as well as those of the API)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any, cast

from prometheus_client.core import CounterMetricFamily, Metric, SummaryMetricFamily
from prometheus_client.registry import Collector

from app.observability.metrics import Metrics
from app.services import Services
from pipelines.graph import GraphStore, GraphUnavailable
from pipelines.ingest.service import Ingestor
from pipelines.recall.service import Recaller

log = logging.getLogger("mnemograph.metrics")


class _Proxy:
    def __init__(self, inner: Any, metrics: Metrics) -> None:
        self._inner = inner
        self._metrics = metrics

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class MeteredIngestor(_Proxy):
    def _timed(self, kind: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        result = call(*args, **kwargs)
        self._metrics.observe_ingest(kind, result.items, time.perf_counter() - start)
        return result

    def ingest_session(self, *args: Any, **kwargs: Any) -> Any:
        return self._timed("session", self._inner.ingest_session, *args, **kwargs)

    def ingest_sessions(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        results = self._inner.ingest_sessions(*args, **kwargs)
        items = [it for r in results for it in r.items]
        self._metrics.observe_ingest("sessions", items, time.perf_counter() - start)
        return results

    def add_memories(self, *args: Any, **kwargs: Any) -> Any:
        return self._timed("memories", self._inner.add_memories, *args, **kwargs)


class MeteredRecaller(_Proxy):
    def recall(self, *args: Any, **kwargs: Any) -> Any:
        response = self._inner.recall(*args, **kwargs)
        self._metrics.observe_recall(dict(response.timings_ms))
        return response


class JobRunCollector(Collector):
    """``mnemograph_job_runs_total{job,status}`` and ``mnemograph_job_duration_seconds``
    (count and sum per job), read from the recorded runs at scrape time."""

    def __init__(self, store: Callable[[], GraphStore | None]) -> None:
        self._store = store

    def collect(self) -> Iterator[Metric]:
        runs = CounterMetricFamily(
            "mnemograph_job_runs", "Recorded consolidation job runs", labels=["job", "status"]
        )
        seconds = SummaryMetricFamily(
            "mnemograph_job_duration_seconds", "Durations of recorded job runs", labels=["job"]
        )
        store = self._store()
        rows: list[dict[str, Any]] = []
        if store is not None:
            try:
                rows = store.read("metrics/job_runs")
            except GraphUnavailable as exc:
                log.warning("job run metrics skipped: %s", exc)
        per_job: dict[str, list[float]] = {}
        for row in rows:
            job, status = str(row["job"]), str(row["status"])
            runs.add_metric([job, status], float(row["runs"]))
            total = per_job.setdefault(job, [0.0, 0.0])
            total[0] += float(row["runs"])
            total[1] += float(row["duration_ms"]) / 1000.0
        for job, (count, total_s) in sorted(per_job.items()):
            seconds.add_metric([job], count_value=int(count), sum_value=total_s)
        yield runs
        yield seconds


def instrument(services: Services, metrics: Metrics) -> None:
    """Meter the services' ingest and recall calls (the routers call them as before)."""
    services.ingestor = cast(Ingestor, MeteredIngestor(services.ingestor, metrics))
    services.recaller = cast(Recaller, MeteredRecaller(services.recaller, metrics))
