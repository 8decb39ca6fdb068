"""Neo4j down: the store fails fast with GraphUnavailable (a 503 at the API), never a driver
error, and comes back by itself. "Down" is a real closed port on loopback."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from fastapi.testclient import TestClient

from pipelines.graph import GraphConfig, GraphStore, GraphUnavailable, Row, Tx
from tests.integration.tcp_proxy import TcpProxy


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
    # a refused connection opens the breaker at once: no retries against a closed port
    assert first < GraphConfig().max_transaction_retry_time_s, first
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


def _proxied(neo4j_uri: str) -> tuple[TcpProxy, GraphStore]:
    host, port = neo4j_uri.removeprefix("bolt://").rsplit(":", 1)
    proxy = TcpProxy(host, int(port))
    # long retries and delays: only the breaker can make the in-flight call give up early
    config = GraphConfig(
        uri=proxy.uri,
        max_transaction_retry_time_s=120.0,
        first_retry_delay_s=5.0,
        unavailable_backoff_s=0.2,
    )
    return proxy, GraphStore(config)


def test_a_transaction_in_flight_when_neo4j_goes_down_gives_up_without_waiting_out_retries(
    neo4j_uri: str,
) -> None:
    proxy, store = _proxied(neo4j_uri)
    attempts: list[int] = []
    inside, cut = threading.Event(), threading.Event()
    outcome: list[object] = []

    def work(tx: Tx) -> list[Row]:
        attempts.append(1)
        tx.run("spaces/list", allowed=None, skip=0, limit=1)
        inside.set()
        cut.wait(30)
        return tx.run("spaces/list", allowed=None, skip=0, limit=1)

    def in_flight() -> None:
        try:
            outcome.append(store.read_tx(work))
        except Exception as exc:
            outcome.append(exc)

    thread = threading.Thread(target=in_flight)
    try:
        thread.start()
        assert inside.wait(30)
        proxy.refuse()  # Neo4j "crashes": connections reset, new ones refused
        cut.set()
        thread.join(30)  # far below the 120 s of retries the config allows
        assert not thread.is_alive(), "the in-flight call waited out its retries"
        assert isinstance(outcome[0], GraphUnavailable), outcome
        assert attempts == [1]
        with pytest.raises(GraphUnavailable, match="unreachable"):
            store.read("spaces/list", allowed=None, skip=0, limit=1)  # the breaker is open
        proxy.serve()  # Neo4j is back on the same port
        time.sleep(0.3)  # past the breaker's backoff: the next call probes and goes through
        assert isinstance(store.read("spaces/list", allowed=None, skip=0, limit=1), list)
        assert not store._breaker.is_open
    finally:
        cut.set()
        thread.join(30)
        store.close()
        proxy.close()


def test_stale_pooled_connections_after_a_restart_are_replaced_within_the_call(
    neo4j_uri: str,
) -> None:
    proxy, store = _proxied(neo4j_uri)
    try:
        for _ in range(3):
            store.read("spaces/list", allowed=None, skip=0, limit=1)  # pooled connections
        proxy.drop()  # as after a Neo4j restart: every pooled connection is dead
        rows = store.write_tx(lambda tx: tx.run("spaces/list", allowed=None, skip=0, limit=1))
        assert isinstance(rows, list)
        assert not store._breaker.is_open
    finally:
        store.close()
        proxy.close()
