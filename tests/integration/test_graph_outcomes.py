"""What a failure says it wrote, against a real Neo4j behind a TCP proxy the tests cut: a write
cut before its commit says nothing was written, one cut at its commit that it may have been;
every 503 body carries ``may_have_committed``; a liveness probe opens the breaker when Neo4j
dies though no call failed; a request while the store recovers from a restart is rolled back
and refused within its budget; a failed lease release is retried with the run's last record;
a job run read after its space's erasure is "space not found"."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient

import cypher
from app.main import create_app
from app.settings import Settings
from pipelines.consolidate.config import DEFAULT_CONSOLIDATION_CONFIG, RunnerConfig
from pipelines.consolidate.lease import acquire_lease
from pipelines.consolidate.runner import Runner, get_run, run_job
from pipelines.engine import Engine, EngineSettings, Models
from pipelines.errors import NotFound
from pipelines.graph import GraphConfig, GraphStore, GraphUnavailable, Row, Tx, mark, tracking
from tests.cypher import LIBRARY
from tests.integration.tcp_proxy import TcpProxy


def _statements(name: str) -> str:
    """The probe statements (tests/cypher/probe), else production's."""
    return LIBRARY.load(name) if name.startswith("probe/") else cypher.load(name)


def _until(condition: Callable[[], bool], seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def _proxy(neo4j_uri: str) -> TcpProxy:
    host, port = neo4j_uri.removeprefix("bolt://").rsplit(":", 1)
    return TcpProxy(host, int(port))


@pytest.fixture
def proxied(
    neo4j_uri: str, neo4j_login: dict[str, str | None]
) -> Iterator[tuple[TcpProxy, GraphStore]]:
    proxy = _proxy(neo4j_uri)
    config = GraphConfig(
        uri=proxy.uri, **neo4j_login, unavailable_backoff_s=0.1, liveness_interval_s=0
    )
    store = GraphStore(config).using(_statements)
    try:
        yield proxy, store
    finally:
        store.driver.close()
        store._breaker.stop()
        proxy.close()


@pytest.fixture
def probe_node(engine: Engine) -> Iterator[str]:
    node = f"p-{uuid.uuid4().hex[:10]}"
    direct = engine.store.using(_statements)
    direct.write("probe/create", id=node)
    yield node
    direct.write("probe/delete", id=node)


def test_a_write_cut_before_its_commit_says_nothing_was_written(
    proxied: tuple[TcpProxy, GraphStore], probe_node: str, engine: Engine
) -> None:
    proxy, store = proxied

    def work(tx: Tx) -> list[Row]:
        tx.run("probe/set", id=probe_node, v=1)
        proxy.refuse()  # Neo4j dies while the transaction is open, before its commit
        return tx.run("probe/set", id=probe_node, v=2)

    with pytest.raises(GraphUnavailable) as caught:
        store.write_tx(work)
    assert caught.value.may_have_committed is False
    assert engine.store.using(_statements).read("probe/get", id=probe_node) == [{"v": None}]


def test_a_write_cut_at_its_commit_says_it_may_have_committed(
    proxied: tuple[TcpProxy, GraphStore], probe_node: str
) -> None:
    proxy, store = proxied

    def work(tx: Tx) -> list[Row]:
        rows = tx.run("probe/set", id=probe_node, v=3)  # answered: only the commit is left
        proxy.refuse()
        return rows

    with pytest.raises(GraphUnavailable) as caught, tracking() as log:
        store.write_tx(work)
    assert caught.value.may_have_committed is True
    assert log.committed  # the request's record says so too
    # a read transaction never may have committed, whatever cut it
    proxy.serve()
    assert _until(lambda: not store._breaker.is_open)

    def read(tx: Tx) -> list[Row]:
        rows = tx.run("probe/get", id=probe_node)
        proxy.refuse()
        return rows

    with pytest.raises(GraphUnavailable) as caught:
        store.read_tx(read)
    assert caught.value.may_have_committed is False


def test_the_liveness_probe_opens_the_breaker_when_neo4j_dies_without_a_failed_call(
    neo4j_uri: str, neo4j_login: dict[str, str | None]
) -> None:
    proxy = _proxy(neo4j_uri)
    store = GraphStore(
        GraphConfig(
            uri=proxy.uri, **neo4j_login, unavailable_backoff_s=0.1, liveness_interval_s=0.2
        )
    )
    try:
        store.read("graph/ping")
        store.check_available()  # up: nothing raised
        t0 = time.monotonic()
        proxy.refuse()
        assert _until(lambda: store._breaker.is_open, 5.0)
        assert time.monotonic() - t0 < 2.0
        with pytest.raises(GraphUnavailable, match="unreachable") as caught:
            store.check_available()
        assert caught.value.may_have_committed is False
        proxy.serve()
        assert _until(lambda: not store._breaker.is_open)
    finally:
        store.close()
        proxy.close()


def test_while_recovering_a_request_is_rolled_back_and_refused_within_its_budget(
    neo4j_uri: str, neo4j_login: dict[str, str | None], probe_node: str, engine: Engine
) -> None:
    config = GraphConfig(
        uri=neo4j_uri,
        **neo4j_login,
        unavailable_backoff_s=0.1,
        liveness_interval_s=0,
        recovering_window_s=60.0,
        recovering_budget_s=0.5,
        max_transaction_retry_time_s=1.0,
    )
    store = GraphStore(config).using(_statements)
    holder = engine.store.using(_statements)
    locked, done = threading.Event(), threading.Event()

    def hold(tx: Tx) -> None:  # another transaction holds the node's lock for a while
        tx.run("probe/set", id=probe_node, v=0)
        locked.set()
        done.wait(10)

    blocker = threading.Thread(target=lambda: holder.write_tx(hold))
    try:
        store._breaker.trip("as after a restart")
        assert _until(lambda: not store._breaker.is_open)
        assert store._breaker.recovering
        blocker.start()
        assert locked.wait(10)
        t0 = time.monotonic()
        with pytest.raises(GraphUnavailable, match="rolled back") as caught, tracking(t0):
            store.write("probe/set", id=probe_node, v=9)  # a request's write, on the lock
        assert time.monotonic() - t0 < 3.0
        assert caught.value.may_have_committed is False
        with pytest.raises(GraphUnavailable, match="not started"), tracking(t0 - 1.0):
            store.read("probe/get", id=probe_node)  # its budget is spent: refused at once
        assert store.read("probe/get", id=probe_node) == [{"v": None}]  # no budget, no lock
    finally:
        done.set()
        blocker.join(10)
        store.driver.close()
        store._breaker.stop()
    assert holder.read("probe/get", id=probe_node) == [{"v": 0}]  # the refused write: none


# --------------------------------------------------------------------------- over HTTP


@pytest.fixture(scope="module")
def down_app(
    neo4j_uri: str, neo4j_login: dict[str, str | None], models: Models
) -> Iterator[tuple[TcpProxy, Engine, TestClient]]:
    proxy = _proxy(neo4j_uri)
    graph = GraphConfig(
        uri=proxy.uri, **neo4j_login, unavailable_backoff_s=0.1, liveness_interval_s=0.2
    )
    engine = Engine.start(EngineSettings(graph=graph), models=models)
    app = create_app(
        Settings(
            neo4j_uri=proxy.uri,
            neo4j_user=neo4j_login["user"],
            neo4j_password=neo4j_login["password"],
        ),
        engine=engine,
    )

    @app.post("/v1/test-faults/{space}/commit-then-fail")
    def commit_then_fail(space: str) -> None:  # a multi-transaction write that fails late
        engine.store.write_tx(lambda tx: tx.run("spaces/get", space=space))  # committed
        raise mark(GraphUnavailable("the second transaction failed"), False)

    try:
        with TestClient(app) as client:
            yield proxy, engine, client
    finally:
        engine.close()
        proxy.close()


def test_every_503_says_whether_the_work_may_have_committed(
    down_app: tuple[TcpProxy, Engine, TestClient],
) -> None:
    proxy, _, client = down_app
    space = f"t-out-{uuid.uuid4().hex[:8]}"
    assert client.post("/v1/spaces", json={"id": space}).status_code == 201
    r = client.post(f"/v1/test-faults/{space}/commit-then-fail")
    assert r.status_code == 503, r.text
    assert r.json()["error"]["may_have_committed"] is True  # its first transaction committed
    proxy.refuse()
    try:
        for method, path, body in (
            ("POST", f"/v1/spaces/{space}/memories", {"memories": [{"content": "a note"}]}),
            ("POST", f"/v1/spaces/{space}/sessions", {"session_id": "s", "turns": []}),
            ("POST", f"/v1/spaces/{space}/recall", {"query": "anything"}),
            ("GET", f"/v1/spaces/{space}", None),
            ("DELETE", f"/v1/spaces/{space}", None),
        ):
            r = client.request(method, path, json=body)
            if r.status_code == 422:  # validation comes first (the empty session)
                continue
            assert r.status_code == 503, (path, r.text)
            error = r.json()["error"]
            assert error["may_have_committed"] is False, (path, error)
            assert r.headers["Retry-After"] == "1"
    finally:
        proxy.serve()
    assert _until(lambda: client.get(f"/v1/spaces/{space}").status_code == 200)
    assert client.delete(f"/v1/spaces/{space}").status_code == 200


def test_a_failed_lease_release_is_retried_with_the_runs_last_record(
    down_app: tuple[TcpProxy, Engine, TestClient],
) -> None:
    proxy, engine, client = down_app
    space = f"t-lease-{uuid.uuid4().hex[:8]}"
    assert client.post("/v1/spaces", json={"id": space}).status_code == 201
    notes = [{"content": f"note {i} about the garden and the river"} for i in range(3)]
    assert client.post(f"/v1/spaces/{space}/memories", json={"memories": notes}).status_code == 201
    config = DEFAULT_CONSOLIDATION_CONFIG.model_copy(
        update={"runner": RunnerConfig(lease_ttl_seconds=60.0, renew_every_seconds=15.0)}
    )
    started: list[str] = []

    def die(label: str) -> None:  # Neo4j dies at the last checkpoint: record, release fail
        if not started:
            started.append(label)
            proxy.refuse()

    try:
        with pytest.raises(GraphUnavailable) as caught:
            run_job(engine, space, "decay", config=config, runner=Runner(failure_hook=die))
        assert started, "the job never reached a checkpoint"
        assert caught.value.may_have_committed is True  # its run record was written
    finally:
        proxy.serve()

    def free() -> bool:
        try:
            return acquire_lease(engine.store, space, "decay", "next", 60.0) is not None
        except GraphUnavailable:  # the breaker has not closed yet
            return False

    # long before the 60 s TTL: the lease is gone and the run reads failed, not running
    t0 = time.monotonic()
    assert _until(free)
    assert time.monotonic() - t0 < 10.0
    runs = client.get(f"/v1/spaces/{space}/jobs?job=decay").json()["runs"]
    # the job's work was done when Neo4j died (its last checkpoint): the record written by
    # the retried release says so, with when it ended
    assert [(r["status"], r["ended_at"] is not None) for r in runs] == [("ok", True)], runs
    assert client.delete(f"/v1/spaces/{space}").status_code == 200
    with pytest.raises(NotFound, match=f"space '{space}' does not exist"):
        get_run(engine, space, runs[0]["id"])  # raced by the erasure: the space is gone
