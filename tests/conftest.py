"""Shared fixtures. Tests that need Neo4j get a REAL server: their own instance on a free port
with a throw-away data dir (never a developer's running one), started once per session.
If it cannot start, those tests fail with the reason; nothing is skipped.

Set MNEMOGRAPH_TEST_NEO4J_URI to use an already running server instead (e.g. in Docker).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
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


@pytest.fixture(scope="session")
def neo4j_uri(request: pytest.FixtureRequest) -> Iterator[str]:
    given = os.environ.get("MNEMOGRAPH_TEST_NEO4J_URI")
    if given:
        yield given
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
        runtime.start(instance, wait=False, quiet=True)  # launched, not ready yet
        if "models" in request.fixturenames:
            # the models load while the server starts (its own process): ~20 s saved
            request.getfixturevalue("models")
        runtime.start(instance, timeout=240, quiet=True)  # the same server: waits until ready
    except BaseException as exc:
        runtime.stop(instance, timeout=0)
        if not isinstance(exc, runtime.RuntimeErrorWithHint):
            raise  # a model that did not load, an interruption: as it is, with its traceback
        # fail loudly, with the reason, never skip
        pytest.fail(f"could not start the test Neo4j + GDS instance: {exc}", pytrace=False)
    try:
        yield instance.bolt_uri
    finally:
        # a throw-away instance needs no clean shutdown (about 10 s of checkpoint), unless kept
        runtime.stop(instance, timeout=60 if keep else 0)
        # About 530 MB per run (the Neo4j home, data and logs): left behind, a few dozen test
        # runs fill a disk. MNEMOGRAPH_TEST_KEEP_NEO4J=1 keeps it for a post-mortem.
        if not keep:
            shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def models():
    from pipelines.engine import EngineSettings, load_models

    return load_models(EngineSettings())


@pytest.fixture(scope="session")
def engine(neo4j_uri, models):
    from pipelines.engine import Engine, EngineSettings
    from pipelines.graph import GraphConfig

    eng = Engine.start(EngineSettings(graph=GraphConfig(uri=neo4j_uri)), models=models)
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
