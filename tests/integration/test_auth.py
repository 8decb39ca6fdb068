"""API keys: bearer auth on /v1, keys limited to spaces, read-only keys refused on every write
route (walked from the OpenAPI document, so a new route cannot be missed), only a global
read-write key deletes a space, loopback-only without keys."""

import re
import uuid

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from app.auth import is_write
from app.main import create_app
from app.settings import Settings

KEYS = "admin-key;limited-key:{a};reader-key@read;scoped-reader:{a}@read;writer@write"


@pytest.fixture(scope="module")
def secured(engine):
    a, b = f"a-{uuid.uuid4().hex[:6]}", f"b-{uuid.uuid4().hex[:6]}"
    settings = Settings(api_keys=KEYS.format(a=a), neo4j_uri=engine.store.config.uri)
    with TestClient(create_app(settings, engine=engine)) as c:
        admin = {"Authorization": "Bearer admin-key"}
        assert c.post("/v1/spaces", json={"id": a}, headers=admin).status_code == 201
        assert c.post("/v1/spaces", json={"id": b}, headers=admin).status_code == 201
        yield c, a, b
        c.delete(f"/v1/spaces/{a}", headers=admin)
        c.delete(f"/v1/spaces/{b}", headers=admin)


def test_missing_and_wrong_keys(secured):
    c, a, _ = secured
    assert c.get(f"/v1/spaces/{a}").status_code == 401
    r = c.get(f"/v1/spaces/{a}", headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
    assert c.get("/healthz").status_code == 200  # liveness needs no key


def test_limited_key(secured):
    c, a, b = secured
    h = {"Authorization": "Bearer limited-key"}
    assert c.get(f"/v1/spaces/{a}", headers=h).status_code == 200
    r = c.get(f"/v1/spaces/{b}", headers=h)
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    assert c.delete(f"/v1/spaces/{b}", headers=h).status_code == 403
    listed = {s["id"] for s in c.get("/v1/spaces", headers=h).json()["spaces"]}
    assert listed == {a}
    assert c.post("/v1/spaces", json={"id": "other"}, headers=h).status_code == 403


def test_bind_guard():
    with pytest.raises(SystemExit, match="Refusing to bind"):
        Settings(host="0.0.0.0").check_bind()
    Settings(host="0.0.0.0", api_keys="k").check_bind()
    Settings(host="0.0.0.0", allow_unauthenticated_remote=True).check_bind()
    Settings(host="127.0.0.1").check_bind()
    Settings(host="localhost").check_bind()


def test_key_parsing():
    keys = Settings(api_keys=" k1 ; k2:s1,s2 ;").parsed_api_keys
    assert [k.key for k in keys] == ["k1", "k2"]
    assert keys[0].spaces is None and keys[1].spaces == frozenset({"s1", "s2"})
    assert keys[1].allows("s1") and not keys[1].allows("s3")
    assert not keys[0].read_only and keys[0].admin and not keys[1].admin


def test_key_roles_parsing():
    raw = "r@read; rs:s1,s2@read ;w@write;ws:s1@write;a@b@read"
    keys = {k.key: k for k in Settings(api_keys=raw).parsed_api_keys}
    assert set(keys) == {"r", "rs", "w", "ws", "a@b"}  # an '@' in a key: the role must follow
    assert keys["r"].read_only and keys["r"].spaces is None and not keys["r"].admin
    assert keys["rs"].read_only and keys["rs"].spaces == frozenset({"s1", "s2"})
    assert not keys["w"].read_only and keys["w"].admin
    assert not keys["ws"].read_only and keys["ws"].spaces == {"s1"} and not keys["ws"].admin
    assert keys["a@b"].read_only
    for bad in ("k@reed", "k:s1@", ":s1", "secret@part"):  # never a silent read-write key
        with pytest.raises(ValidationError, match="api_keys") as caught:
            Settings(api_keys=bad)
        assert "secret" not in str(caught.value)  # a key is never echoed into a log


def _write_routes(c: TestClient) -> list[tuple[str, str]]:
    """Every write operation the server documents (method, path template)."""
    paths = c.get("/openapi.json").json()["paths"]
    return [
        (method, path)
        for path, ops in paths.items()
        for method in ops
        if path.startswith("/v1/") and is_write(method, path)
    ]


def _filled(path: str, space: str) -> str:
    return re.sub(r"\{[^}]+\}", "x", path.replace("{space}", space))


def test_read_only_keys_are_refused_on_every_write_route(secured):
    c, a, _ = secured
    routes = _write_routes(c)
    assert len(routes) >= 10 and ("delete", "/v1/spaces/{space}") in routes
    assert ("post", "/v1/spaces/{space}/recall") not in routes  # a read, in a POST
    for key in ("reader-key", "scoped-reader"):
        h = {"Authorization": f"Bearer {key}"}
        for method, path in routes:
            r = c.request(method.upper(), _filled(path, a), json={}, headers=h)
            assert r.status_code == 403, (key, method, path, r.text)
            assert r.json()["error"]["code"] == "forbidden", (key, method, path)
        # the reads answer: the space, recall and context through their POSTs
        assert c.get(f"/v1/spaces/{a}", headers=h).status_code == 200
        r = c.post(f"/v1/spaces/{a}/recall", json={"query": "anything"}, headers=h)
        assert r.status_code == 200, r.text
        body = {"query": "anything", "context_window": 1000}
        r = c.post(f"/v1/spaces/{a}/context", json=body, headers=h)
        assert r.status_code == 200, r.text
    scoped = {"Authorization": "Bearer scoped-reader"}
    assert {s["id"] for s in c.get("/v1/spaces", headers=scoped).json()["spaces"]} == {a}
    assert (
        c.get(f"/v1/spaces/{a}", headers={"Authorization": "Bearer admin-key"}).json()["id"] == a
    )  # still there: no refused DELETE went through


def test_only_a_global_read_write_key_deletes_a_space(secured, engine):
    c, a, _ = secured
    h = {"Authorization": "Bearer limited-key"}
    r = c.delete(f"/v1/spaces/{a}", headers=h)
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden", r.text
    assert c.get(f"/v1/spaces/{a}", headers=h).status_code == 200  # still there
    # a scoped read-write key still writes in its space
    r = c.patch(f"/v1/spaces/{a}", json={"description": "kept"}, headers=h)
    assert r.status_code == 200, r.text
    doomed = f"d-{uuid.uuid4().hex[:6]}"
    writer = {"Authorization": "Bearer writer"}  # '@write': read-write, every space
    assert c.post("/v1/spaces", json={"id": doomed}, headers=writer).status_code == 201
    assert c.delete(f"/v1/spaces/{doomed}", headers=writer).status_code == 200
    assert c.get(f"/v1/spaces/{doomed}", headers=writer).status_code == 404


def test_health_and_metrics_answer_every_key_as_before(secured):
    c, _, _ = secured
    for key in ("admin-key", "reader-key"):
        h = {"Authorization": f"Bearer {key}"}
        assert c.get("/readyz", headers=h).status_code == 200
        assert c.get("/metrics", headers=h).status_code == 200


def test_health_endpoints_can_require_a_key(engine):
    settings = Settings(
        api_keys="admin-key", health_requires_key=True, neo4j_uri=engine.store.config.uri
    )
    with TestClient(create_app(settings, engine=engine)) as c:
        assert c.get("/healthz").status_code == 200  # liveness never needs a key
        for path in ("/readyz", "/metrics"):
            r = c.get(path)
            assert r.status_code == 401, (path, r.text)
            assert r.json()["error"]["code"] == "unauthorized"
            assert c.get(path, headers={"Authorization": "Bearer admin-key"}).status_code == 200


def test_health_endpoints_are_open_by_default_even_with_keys(secured):
    c, _, _ = secured
    assert c.get("/readyz").status_code == 200
    assert c.get("/metrics").status_code == 200
