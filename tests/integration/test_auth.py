"""API keys: bearer auth on /v1, keys limited to spaces, loopback-only without keys."""

import uuid

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings


@pytest.fixture(scope="module")
def secured(engine):
    a, b = f"a-{uuid.uuid4().hex[:6]}", f"b-{uuid.uuid4().hex[:6]}"
    settings = Settings(api_keys=f"admin-key;limited-key:{a}", neo4j_uri=engine.store.config.uri)
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
