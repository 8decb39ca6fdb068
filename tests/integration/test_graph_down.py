"""Neo4j down: the store fails fast with GraphUnavailable (a 503 at the API), never a driver
error, and comes back by itself. "Down" is a real closed port on loopback."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from pipelines.engine import Engine, EngineSettings, Models
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


def _read(store: GraphStore) -> list[Row]:
    return store.read("spaces/list", allowed=None, skip=0, limit=1)


def _until(condition: Callable[[], bool], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def test_the_breaker_closes_by_itself_as_soon_as_neo4j_answers(
    neo4j_uri: str, neo4j_login: dict[str, str | None]
) -> None:
    store = GraphStore(GraphConfig(uri=neo4j_uri, **neo4j_login, unavailable_backoff_s=0.2))
    try:
        store._breaker.trip("as after a failed call")
        with pytest.raises(GraphUnavailable):
            _read(store)  # at once: no request waits on a probe
        assert _until(lambda: not store._breaker.is_open)  # the background probe closed it
        assert isinstance(_read(store), list)
    finally:
        store.close()


def test_the_api_answers_503_while_neo4j_is_down_and_resumes_without_a_restart(
    neo4j_uri: str, neo4j_login: dict[str, str | None], models: Models
) -> None:
    proxy = _tcp_proxy(neo4j_uri)
    engine = Engine.start(
        EngineSettings(graph=GraphConfig(uri=proxy.uri, **neo4j_login)), models=models
    )
    space = f"t-down-{uuid.uuid4().hex[:8]}"
    try:
        with TestClient(create_app(Settings(neo4j_uri=proxy.uri), engine=engine)) as client:
            assert client.post("/v1/spaces", json={"id": space}).status_code == 201
            proxy.refuse()  # Neo4j "crashes"
            for request in (
                lambda: client.post(f"/v1/spaces/{space}/recall", json={"query": "anything"}),
                lambda: client.get(f"/v1/spaces/{space}"),
                lambda: client.get("/readyz"),
            ):
                r = request()
                assert r.status_code == 503, r.text
                assert r.headers["Retry-After"] == "1"
            assert client.get(f"/v1/spaces/{space}").json()["error"]["code"] == (
                "graph_unavailable"
            )
            assert client.get("/healthz").status_code == 200
            proxy.serve()  # Neo4j is back on the same port
            assert _until(lambda: client.get(f"/v1/spaces/{space}").status_code == 200)
            r = client.post(f"/v1/spaces/{space}/recall", json={"query": "anything"})
            assert r.status_code == 200, r.text
            assert client.delete(f"/v1/spaces/{space}").status_code == 200
    finally:
        engine.close()
        proxy.close()


def _tcp_proxy(neo4j_uri: str) -> TcpProxy:
    host, port = neo4j_uri.removeprefix("bolt://").rsplit(":", 1)
    return TcpProxy(host, int(port))


def _proxied(neo4j_uri: str, neo4j_login: dict[str, str | None]) -> tuple[TcpProxy, GraphStore]:
    proxy = _tcp_proxy(neo4j_uri)
    # long retries and delays: only the breaker can make the in-flight call give up early
    config = GraphConfig(
        uri=proxy.uri,
        **neo4j_login,
        max_transaction_retry_time_s=120.0,
        first_retry_delay_s=5.0,
        unavailable_backoff_s=0.2,
    )
    return proxy, GraphStore(config)


def test_a_transaction_in_flight_when_neo4j_goes_down_gives_up_without_waiting_out_retries(
    neo4j_uri: str,
    neo4j_login: dict[str, str | None],
) -> None:
    proxy, store = _proxied(neo4j_uri, neo4j_login)
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
            _read(store)  # the breaker is open
        proxy.serve()  # Neo4j is back on the same port
        assert _until(lambda: not store._breaker.is_open)
        assert isinstance(_read(store), list)
    finally:
        cut.set()
        thread.join(30)
        store.close()
        proxy.close()


def test_stale_pooled_connections_after_a_restart_are_replaced_within_the_call(
    neo4j_uri: str,
    neo4j_login: dict[str, str | None],
) -> None:
    proxy, store = _proxied(neo4j_uri, neo4j_login)
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


def _record_plans(store: GraphStore) -> list[str]:
    """The statements the store's warm-up plans, in the order it plans them."""
    planned: list[str] = []
    explain = store._explain

    def recording(text: str, params: dict[str, object]) -> bool:
        planned.append(text)
        return explain(text, params)

    store._explain = recording  # type: ignore[method-assign]
    return planned


def test_the_breaker_plans_the_statements_run_so_far_before_it_closes(
    neo4j_uri: str, neo4j_login: dict[str, str | None]
) -> None:
    store = GraphStore(GraphConfig(uri=neo4j_uri, **neo4j_login, unavailable_backoff_s=0.2))
    planned = _record_plans(store)
    try:
        _read(store)
        store.read("spaces/get", space="x")
        store.read("spaces/get", space="y")  # same statement, same parameter types: once
        assert len(store.warmer) == 2
        store._breaker.trip("as after a failed call")
        assert _until(lambda: not store._breaker.is_open)
        # each once (the order, the most run first, is the unit tests' business)
        assert sorted(planned) == sorted(
            [store._statements("spaces/get"), store._statements("spaces/list")]
        )
        assert store.read("spaces/get", space="x") == []
    finally:
        store.close()


def test_requests_are_refused_at_once_while_the_breaker_warms_up(
    neo4j_uri: str, neo4j_login: dict[str, str | None]
) -> None:
    store = GraphStore(GraphConfig(uri=neo4j_uri, **neo4j_login, unavailable_backoff_s=0.1))
    release, warming = threading.Event(), threading.Event()

    def slow(text: str, params: dict[str, object]) -> bool:
        warming.set()
        release.wait(30)
        return True

    store._explain = slow  # type: ignore[method-assign]
    try:
        _read(store)
        store._breaker.trip("as after a failed call")
        assert warming.wait(30)
        t0 = time.monotonic()
        with pytest.raises(GraphUnavailable, match="warming up"):
            _read(store)
        assert time.monotonic() - t0 < 0.5
        release.set()
        assert _until(lambda: not store._breaker.is_open)
        assert isinstance(_read(store), list)
    finally:
        release.set()
        store.close()


def test_with_no_warm_up_budget_the_statements_are_planned_after_the_breaker_closes(
    neo4j_uri: str,
    neo4j_login: dict[str, str | None],
) -> None:
    config = GraphConfig(
        uri=neo4j_uri, **neo4j_login, unavailable_backoff_s=0.1, plan_warmup_budget_s=0
    )
    store = GraphStore(config)
    planned = _record_plans(store)
    try:
        _read(store)
        store._breaker.trip("as after a failed call")
        assert _until(lambda: not store._breaker.is_open)
        assert _until(lambda: len(planned) == 1)  # in the background, once requests flow
        assert planned == [store._statements("spaces/list")]
    finally:
        store.close()
