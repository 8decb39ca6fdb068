"""Neo4j down: the store fails fast with GraphUnavailable (a 503 at the API), never a driver
error, and comes back by itself. "Down" is a real closed port on loopback."""

from __future__ import annotations

import socket
import time

import pytest
from fastapi.testclient import TestClient

from pipelines.graph import GraphConfig, GraphStore, GraphUnavailable


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_store_without_neo4j_fails_fast_then_at_once() -> None:
    store = GraphStore(GraphConfig(uri=f"bolt://127.0.0.1:{_closed_port()}"))
    try:
        t0 = time.monotonic()
        with pytest.raises(GraphUnavailable, match="not reachable"):
            store.read("spaces/list", allowed=None, skip=0, limit=1)
        first = time.monotonic() - t0
        t0 = time.monotonic()
        for call in (
            lambda: store.write("spaces/get", space="x"),
            lambda: store.write_tx(lambda tx: tx.run("spaces/get", space="x")),
            lambda: store.read_tx(lambda tx: tx.run("spaces/get", space="x")),
        ):
            with pytest.raises(GraphUnavailable, match="unreachable"):
                call()
        at_once = time.monotonic() - t0
    finally:
        store.close()
    # the driver's retries are bounded (max_transaction_retry_time_s), then the breaker answers
    assert first <= GraphConfig().max_transaction_retry_time_s + 3.0, first
    assert at_once < 0.5, at_once


def test_the_breaker_closes_as_soon_as_neo4j_answers(neo4j_uri: str) -> None:
    store = GraphStore(GraphConfig(uri=neo4j_uri, unavailable_backoff_s=0.2))
    try:
        store._breaker._open_until = time.monotonic() + 0.2  # as after a failed call
        with pytest.raises(GraphUnavailable):
            store.read("spaces/list", allowed=None, skip=0, limit=1)
        time.sleep(0.3)
        assert isinstance(store.read("spaces/list", allowed=None, skip=0, limit=1), list)
        assert store._breaker._open_until == 0.0
    finally:
        store.close()


def test_the_api_answers_a_503_with_retry_after_when_neo4j_is_unreachable(
    client: TestClient, space: str
) -> None:
    store = client.app.state.services.engine.store  # type: ignore[attr-defined]
    store._breaker._open_until = time.monotonic() + 5.0  # as after a failed call
    try:
        r = client.post(f"/v1/spaces/{space}/recall", json={"query": "anything"})
        assert r.status_code == 503, r.text
        assert r.headers["Retry-After"] == "1"
        assert r.json()["error"]["code"] == "graph_unavailable"
        assert client.get("/healthz").status_code == 200
        ready = client.get("/readyz")
        assert ready.status_code == 503 and ready.headers["Retry-After"] == "1"
    finally:
        store._breaker._open_until = 0.0
    assert client.post(f"/v1/spaces/{space}/recall", json={"query": "anything"}).status_code == 200
