"""Shared fixtures. Tests that need Neo4j get a REAL server: their own instance on a free port
with a throw-away data dir (never a developer's running one), started once per session.
If it cannot start, those tests fail with the reason; nothing is skipped.

The session's own instance runs with authentication, as every instance does (its generated
password, in its throw-away data dir); ``neo4j_auth`` gives the credentials. Set
MNEMOGRAPH_TEST_NEO4J_URI to use an already running server instead (e.g. in Docker), with
MNEMOGRAPH_TEST_NEO4J_PASSWORD for user ``neo4j`` if it has authentication on (unset: none).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# Property tests check behaviour, not speed (speed is a benchmark): on a shared, loaded
# machine a per-example deadline only makes them flaky.
settings.register_profile("mnemograph", deadline=None)
settings.load_profile("mnemograph")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Neo4jServer:
    uri: str
    auth: tuple[str, str] | None  # (user, password); None: a server without authentication


@pytest.fixture(scope="session")
def neo4j_server(request: pytest.FixtureRequest) -> Iterator[Neo4jServer]:
    given = os.environ.get("MNEMOGRAPH_TEST_NEO4J_URI")
    if given:
        password = os.environ.get("MNEMOGRAPH_TEST_NEO4J_PASSWORD") or None
        yield Neo4jServer(given, ("neo4j", password) if password else None)
        return
    from neo4j_runtime import runtime
    from neo4j_runtime.settings import InstanceConfig

    base = Path(tempfile.mkdtemp(prefix="mnemograph-test-neo4j-"))
    instance = InstanceConfig(
        name="test",
        base_dir=base,
        bolt_port=_free_port(),
        http_port=_free_port(),  # Neo4j Browser, checked by tests/integration/test_browser.py
        heap_initial="512m",
        heap_max="1g",
        pagecache="512m",
    )
    keep = os.environ.get("MNEMOGRAPH_TEST_KEEP_NEO4J") == "1"
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            # neo4j-admin sets the password (a few seconds of JVM), then the server launches
            launched = pool.submit(runtime.start, instance, wait=False, quiet=True)
            if "models" in request.fixturenames:
                # the models load meanwhile (the server is its own process): ~20 s saved
                request.getfixturevalue("models")
            launched.result()  # launched, not ready yet
        runtime.start(instance, timeout=240, quiet=True)  # the same server: waits until ready
    except BaseException as exc:
        runtime.stop(instance, timeout=0)
        if not isinstance(exc, runtime.RuntimeErrorWithHint):
            raise  # a model that did not load, an interruption: as it is, with its traceback
        # fail loudly, with the reason, never skip
        pytest.fail(f"could not start the test Neo4j + GDS instance: {exc}", pytrace=False)
    try:
        yield Neo4jServer(instance.bolt_uri, instance.auth)
    finally:
        # a throw-away instance needs no clean shutdown (about 10 s of checkpoint), unless kept
        runtime.stop(instance, timeout=60 if keep else 0)
        # About 530 MB per run (the Neo4j home, data and logs): left behind, a few dozen test
        # runs fill a disk. MNEMOGRAPH_TEST_KEEP_NEO4J=1 keeps it for a post-mortem.
        if not keep:
            shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def neo4j_uri(neo4j_server: Neo4jServer) -> str:
    return neo4j_server.uri


@pytest.fixture(scope="session")
def neo4j_auth(neo4j_server: Neo4jServer) -> tuple[str, str] | None:
    """The test server's credentials, as the driver takes them."""
    return neo4j_server.auth


@pytest.fixture(scope="session")
def neo4j_login(neo4j_server: Neo4jServer) -> dict[str, str | None]:
    """The credentials as GraphConfig and Settings fields: ``GraphConfig(uri, **neo4j_login)``."""
    user, password = neo4j_server.auth or (None, None)
    return {"user": user, "password": password}


@pytest.fixture(scope="session")
def models():
    from pipelines.engine import EngineSettings, load_models

    return load_models(EngineSettings())


@pytest.fixture(scope="session")
def engine(neo4j_uri, neo4j_login, models):
    from pipelines.engine import Engine, EngineSettings
    from pipelines.graph import GraphConfig

    graph = GraphConfig(uri=neo4j_uri, **neo4j_login)
    eng = Engine.start(EngineSettings(graph=graph), models=models)
    yield eng
    eng.close()


@pytest.fixture(scope="session")
def app(engine):
    from app.main import create_app
    from app.settings import Settings

    return create_app(Settings(neo4j_uri=engine.store.config.uri), engine=engine)


@pytest.fixture(scope="session")
def client(app):
    from fastapi.testclient import TestClient

    with TestClient(app) as c:
        yield c


@pytest.fixture
def space(client) -> Iterator[str]:
    """A fresh, empty space; deleted afterwards."""
    space_id = f"t-{uuid.uuid4().hex[:10]}"
    r = client.post("/v1/spaces", json={"id": space_id})
    assert r.status_code == 201, r.text
    yield space_id
    client.delete(f"/v1/spaces/{space_id}")
