"""The Prometheus metrics of one app (its own registry, so several apps in one process, as
in the tests, never collide). Labels have bounded values: route templates, not paths."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
STEP_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "mnemograph_http_requests_total", "HTTP requests by route template, method, status",
            ["route", "method", "status"], registry=r,
        )  # fmt: skip
        self.latency = Histogram(
            "mnemograph_http_request_duration_seconds", "HTTP request latency",
            ["route", "method", "status"], buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.in_flight = Gauge(
            "mnemograph_http_requests_in_flight", "Requests being served", registry=r
        )
        self.refusals = Counter(
            "mnemograph_admission_refusals_total",
            "Requests refused by admission (503 before routing), by route template and class",
            ["route", "route_class"], registry=r,
        )  # fmt: skip
        self.ingested = Counter(
            "mnemograph_ingest_items_total", "Items written by ingest calls, by decision",
            ["decision"], registry=r,
        )  # fmt: skip
        self.ingest_seconds = Histogram(
            "mnemograph_ingest_duration_seconds", "Duration of ingest calls",
            ["kind"], buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.recall_seconds = Histogram(
            "mnemograph_recall_duration_seconds",
            "Recalls by caller: api (/recall, MCP) or assembler (inside /context)",
            ["caller"], buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.recall_steps = Histogram(
            "mnemograph_recall_step_seconds", "Recall step timings (as reported by recall)",
            ["caller", "step"], buckets=STEP_BUCKETS, registry=r,
        )  # fmt: skip

    def observe_request(self, route: str, method: str, status: int, seconds: float) -> None:
        labels = (route, method, str(status))
        self.requests.labels(*labels).inc()
        self.latency.labels(*labels).observe(seconds)

    def observe_ingest(self, kind: str, items: list[Any], seconds: float) -> None:
        self.ingest_seconds.labels(kind).observe(seconds)
        for item in items:
            self.ingested.labels(str(getattr(item, "decision", "unknown"))).inc()

    def observe_recall(self, caller: str, seconds: float, timings_ms: dict[str, float]) -> None:
        self.recall_seconds.labels(caller).observe(seconds)
        for step, ms in timings_ms.items():
            self.recall_steps.labels(caller, step).observe(ms / 1000.0)
