"""Metering the services without changing them: thin proxies around the ingestor, the recaller
and the assembler's own recaller (the recalls a ``/context`` call makes internally)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, cast

from app.observability.metrics import Metrics
from app.services import Services
from pipelines.ingest.service import Ingestor
from pipelines.recall.service import Recaller


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
    """Meters each recall under ``caller``: ``api`` (/recall, MCP) or ``assembler``."""

    def __init__(self, inner: Any, metrics: Metrics, caller: str) -> None:
        super().__init__(inner, metrics)
        self._caller = caller

    def recall(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        response = self._inner.recall(*args, **kwargs)
        self._metrics.observe_recall(
            self._caller, time.perf_counter() - start, dict(response.timings_ms)
        )
        return response


def instrument(services: Services, metrics: Metrics) -> None:
    """Meter the services' ingest and recall calls, and the recalls the assembler makes (the
    routers call them as before)."""
    services.ingestor = cast(Ingestor, MeteredIngestor(services.ingestor, metrics))
    services.recaller = cast(Recaller, MeteredRecaller(services.recaller, metrics, "api"))
    assembler = services.assembler
    assembler.recaller = cast(Recaller, MeteredRecaller(assembler.recaller, metrics, "assembler"))
