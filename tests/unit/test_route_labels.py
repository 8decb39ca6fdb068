"""Route labels of requests the router never saw: an admission refusal (503 before routing)
is counted and logged under its route template, found from the app's router; a path no
route takes stays ``unmatched``. A real ASGI app with the server's middleware, whose handler
blocks until the test lets it go."""

from __future__ import annotations

import io
import json
import logging
import threading
from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app.admission import DEFAULT_LIMITS, Admission
from app.observability import http as observability
from app.observability.middleware import JsonFormatter
from app.settings import Settings

ROUTE = "/v1/spaces/{space}/context"


def _metric(text: str, name: str, **labels: str) -> float:
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items())
    )


def _app(release: threading.Event, entered: threading.Semaphore) -> FastAPI:
    app = FastAPI()
    app.state.settings = Settings()
    app.state.services = None

    @app.post(ROUTE)
    def context(space: str) -> dict[str, str]:
        entered.release()
        release.wait(30)
        return {"space": space}

    app.add_middleware(Admission, limits={**DEFAULT_LIMITS, "read": 1}, wait_seconds=0.05)
    observability.install(app)
    return app


@pytest.fixture
def access_lines() -> Iterator[io.StringIO]:
    """The access log lines as the server writes them (JSON, formatted as they are logged)."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("mnemograph.access")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    yield out
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_an_admission_refusal_carries_its_route_template(access_lines: io.StringIO) -> None:
    release, entered = threading.Event(), threading.Semaphore(0)
    with TestClient(_app(release, entered)) as client:
        held = threading.Thread(target=lambda: client.post("/v1/spaces/s-1/context"))
        held.start()
        try:
            assert entered.acquire(timeout=30)  # the one read slot is taken
            refused = client.post("/v1/spaces/s-2/context")
            assert refused.status_code == 503
            assert refused.json()["error"]["code"] == "overloaded"
            assert client.get("/v1/no/such/route").status_code == 404
        finally:
            release.set()
            held.join(30)
        text = client.get("/metrics").text
    requests = "mnemograph_http_requests_total"
    assert _metric(text, requests, route=ROUTE, status="503") == 1
    assert _metric(text, requests, route=ROUTE, status="200") == 1
    assert _metric(text, requests, route="unmatched", status="404") == 1
    assert _metric(text, requests, route="unmatched", status="503") == 0
    refusals = "mnemograph_admission_refusals_total"
    assert _metric(text, refusals, route=ROUTE, route_class="read") == 1
    assert "s-2" not in text  # templates, never paths

    lines = [json.loads(line) for line in access_lines.getvalue().splitlines()]
    by_status = {line["http"]["status"]: line for line in lines if "http" in line}
    assert by_status[503]["route"] == ROUTE and by_status[503]["http"]["route"] == ROUTE
    assert by_status[404]["route"] == "unmatched"
    assert all("request_id" in line and "route" in line for line in lines)
