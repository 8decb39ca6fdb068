"""Bounded admission (app.admission): route classes, limits, and the 503 beyond them, through
a real ASGI app whose handler blocks until the test lets it go."""

from __future__ import annotations

import threading

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.admission import DEFAULT_LIMITS, Admission, parse_limits, route_class
from app.settings import Settings


def test_route_classes() -> None:
    assert route_class("POST", "/v1/spaces/a/sessions") == "ingest"
    assert route_class("POST", "/v1/spaces/a/memories") == "ingest"
    assert route_class("POST", "/v1/spaces/a/import") == "ingest"
    assert route_class("GET", "/v1/spaces/a/export") == "other"
    assert route_class("POST", "/v1/spaces/a/memories/m%231/supersede") == "ingest"
    assert route_class("POST", "/v1/spaces/a/recall") == "read"
    assert route_class("POST", "/v1/spaces/a/context") == "read"
    assert route_class("POST", "/v1/spaces/a/jobs/merge") == "jobs"
    assert route_class("GET", "/v1/spaces/a/jobs") == "other"
    assert route_class("GET", "/v1/spaces/a/memories/m1") == "other"
    assert route_class("GET", "/healthz") is None
    assert route_class("GET", "/readyz") is None
    assert route_class("GET", "/docs") is None


def test_limits_parse_over_the_defaults_and_name_what_is_wrong() -> None:
    assert parse_limits("", DEFAULT_LIMITS) == DEFAULT_LIMITS
    assert parse_limits("read=3, ingest=1", DEFAULT_LIMITS)["read"] == 3
    with pytest.raises(ValueError, match="writes"):
        parse_limits("writes=2", DEFAULT_LIMITS)
    with pytest.raises(ValueError, match="at least 1"):
        parse_limits("read=0", DEFAULT_LIMITS)
    with pytest.raises(ValueError, match="admission_limits"):
        Settings(admission_limits="read=-1")


def _app(release: threading.Event, entered: threading.Semaphore) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/spaces/{space}/recall")
    def recall(space: str) -> dict[str, str]:
        entered.release()
        release.wait(30)
        return {"space": space}

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    app.add_middleware(Admission, limits={**DEFAULT_LIMITS, "read": 2}, wait_seconds=0.2)
    return app


def test_beyond_the_limit_a_fast_503_with_retry_after_and_health_still_answers() -> None:
    release, entered = threading.Event(), threading.Semaphore(0)
    with TestClient(_app(release, entered)) as client:
        statuses: list[int] = []
        held = [
            threading.Thread(
                target=lambda: statuses.append(client.post("/v1/spaces/a/recall").status_code)
            )
            for _ in range(2)
        ]
        for t in held:
            t.start()
        assert entered.acquire(timeout=30) and entered.acquire(timeout=30)  # both slots taken
        refused = client.post("/v1/spaces/a/recall")
        assert refused.status_code == 503
        assert refused.headers["Retry-After"] == "1"
        assert refused.json()["error"]["code"] == "overloaded"
        assert refused.json()["error"]["may_have_committed"] is False  # refused before any work
        assert "2 read requests" in refused.json()["error"]["message"]
        assert client.get("/healthz").status_code == 200  # never limited
        release.set()
        for t in held:
            t.join(30)
        assert statuses == [200, 200]
        assert client.post("/v1/spaces/a/recall").status_code == 200  # slots were given back


def test_a_request_that_waits_briefly_gets_the_freed_slot() -> None:
    release, entered = threading.Event(), threading.Semaphore(0)
    app = _app(release, entered)
    with TestClient(app) as client:
        first = threading.Thread(target=lambda: client.post("/v1/spaces/a/recall"))
        second = threading.Thread(target=lambda: client.post("/v1/spaces/a/recall"))
        first.start()
        second.start()
        assert entered.acquire(timeout=30) and entered.acquire(timeout=30)
        timer = threading.Timer(0.05, release.set)  # a slot frees within the wait
        timer.start()
        assert client.post("/v1/spaces/a/recall").status_code == 200
        first.join(30)
        second.join(30)
