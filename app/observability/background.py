"""Metrics of the work done behind the read path, read when ``/metrics`` is scraped: recall's
access log (queued, dropped, written, failed and lost accesses) and the stage schema refresher
(queued, dropped, built, failed)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from pipelines.consolidate.refresher import SchemaRefresher
from pipelines.engine import Engine

EngineSource = Callable[[], Engine | None]


class BackgroundCollector(Collector):
    """``mnemograph_access_log_*`` and ``mnemograph_schema_refresher_*``."""

    def __init__(self, engine: EngineSource) -> None:
        self._engine = engine

    def collect(self) -> Iterator[Metric]:
        engine = self._engine()
        if engine is None:
            return
        a = engine.access.stats()
        yield GaugeMetricFamily(
            "mnemograph_access_log_queued", "Accesses waiting to be written", value=a["queued"]
        )
        for name, what in (
            ("dropped", "Accesses dropped because the access log was full"),
            ("written", "Accesses written"),
            ("failed_flushes", "Access batches whose write failed"),
            ("lost", "Accesses lost with a failed write"),
        ):
            yield CounterMetricFamily(f"mnemograph_access_log_{name}", what, value=a[name])
        refresher = engine.workers.get("schemas")
        if not isinstance(refresher, SchemaRefresher):
            return
        yield GaugeMetricFamily(
            "mnemograph_schema_refresher_queued", "Stage schemas waiting for a build",
            value=refresher.queued(),
        )  # fmt: skip
        for name, what in (
            ("dropped", "Schema builds dropped because the refresher's queue was full"),
            ("built", "Stage schemas the refresher built"),
            ("failed", "Refresher batches whose build failed"),
        ):
            value = getattr(refresher, name)
            yield CounterMetricFamily(f"mnemograph_schema_refresher_{name}", what, value=value)
