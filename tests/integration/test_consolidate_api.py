"""Consolidation over HTTP: jobs and their runs, merge undo, supersede/revert, timelines,
stage schemas; error shapes."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from pipelines import maintenance
from pipelines.consolidate.lease import acquire_lease
from tests.integration.test_consolidate_jobs import BIOGRAPHY, ingest


@pytest.fixture
def bio(engine, space):
    ingest(engine, space, BIOGRAPHY)
    return space


def mem(mid: str) -> str:
    return quote(mid, safe="")


def test_run_jobs_and_list_runs(client, bio):
    r = client.post(f"/v1/spaces/{bio}/jobs/decay", json={"dry_run": True})
    assert r.status_code == 200, r.text
    run = r.json()
    assert run["job"] == "decay" and run["dry_run"] is True and run["status"] == "ok"
    assert run["counts"]["would_update"] == 8
    r = client.post(f"/v1/spaces/{bio}/jobs/decay")  # no body: a real run
    assert r.status_code == 200 and r.json()["dry_run"] is False
    r = client.post(f"/v1/spaces/{bio}/jobs/retention", json={})  # dry run by default
    assert r.json()["dry_run"] is True
    runs = client.get(f"/v1/spaces/{bio}/jobs").json()["runs"]
    assert [x["job"] for x in runs] == ["retention", "decay", "decay"]
    only = client.get(f"/v1/spaces/{bio}/jobs", params={"job": "retention"}).json()["runs"]
    assert len(only) == 1
    one = client.get(f"/v1/spaces/{bio}/jobs/runs/{run['id']}")
    assert one.status_code == 200 and one.json()["id"] == run["id"]
    assert client.get(f"/v1/spaces/{bio}/jobs/runs/nope").status_code == 404


def test_job_errors(client, engine, bio):
    r = client.post(f"/v1/spaces/{bio}/jobs/bogus", json={})
    assert r.status_code == 422 and r.json()["error"]["field"] == "job"
    r = client.post(f"/v1/spaces/{bio}/jobs/decay", json={"dry_run": True, "x": 1})
    assert r.status_code == 422 and r.json()["error"]["field"] == "x"
    assert client.post("/v1/spaces/nope-nope/jobs/decay", json={}).status_code == 404
    held = acquire_lease(engine.store, bio, "merge", "another-replica", ttl_seconds=60)
    try:
        r = client.post(f"/v1/spaces/{bio}/jobs/merge", json={})
        assert r.status_code == 409 and r.json()["error"]["code"] == "busy"
    finally:
        held.release()
    assert client.post(f"/v1/spaces/{bio}/jobs/merge", json={}).status_code == 200


def test_merge_undo_over_http(client, bio):
    run = client.post(f"/v1/spaces/{bio}/jobs/merge", json={"dry_run": False}).json()
    assert run["counts"]["merged"] == 1
    merges = client.get(f"/v1/spaces/{bio}/merges").json()["merges"]
    assert len(merges) == 1 and merges[0]["status"] == "applied"
    mid = merges[0]["id"]
    got = client.get(f"/v1/spaces/{bio}/merges/{mid}").json()
    assert got["canonical"] == "s1#3" and got["duplicates"] == ["s2#2"]
    r = client.post(f"/v1/spaces/{bio}/merges/{mid}/undo")
    assert r.status_code == 200 and r.json()["status"] == "undone", r.text
    assert client.post(f"/v1/spaces/{bio}/merges/{mid}/undo").status_code == 409
    assert client.post(f"/v1/spaces/{bio}/merges/nope/undo").status_code == 404
    undone = client.get(f"/v1/spaces/{bio}/merges", params={"status": "undone"}).json()
    assert [m["id"] for m in undone["merges"]] == [mid]


def test_supersede_revert_and_timeline_over_http(client, bio):
    url = f"/v1/spaces/{bio}/memories/{mem('s1#2')}/supersede"
    r = client.post(url, json={"content": "My favourite colour is purple.", "reason": "fixed"})
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["older"] == "s1#2" and body["created_memory"] == body["newer"]
    timeline = client.get(f"/v1/spaces/{bio}/memories/{mem(body['newer'])}/timeline").json()
    assert [c["id"] for c in timeline["chain"]] == ["s1#2", body["newer"]]
    assert [c["status"] for c in timeline["chain"]] == ["superseded", "active"]
    assert timeline["chain"][1]["supersedes"][0]["reason"] == "fixed"
    listed = client.get(f"/v1/spaces/{bio}/supersessions", params={"by": "api"}).json()
    assert [s["id"] for s in listed["supersessions"]] == [body["id"]]
    one = client.get(f"/v1/spaces/{bio}/supersessions/{body['id']}").json()
    assert one["older"] == "s1#2" and one["by"] == "api"
    r = client.post(f"/v1/spaces/{bio}/supersessions/{body['id']}/revert")
    assert r.status_code == 200 and r.json()["older_status"] == "active", r.text
    assert client.post(f"/v1/spaces/{bio}/supersessions/{body['id']}/revert").status_code == 404
    # by another memory
    r = client.post(
        f"/v1/spaces/{bio}/memories/{mem('s2#0')}/supersede",
        json={"by_memory_id": "s3#0", "reason": "moved again"},
    )
    assert r.status_code == 201 and r.json()["created_memory"] is None


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"reason": "x"}, 422, "by_memory_id"),
        ({"by_memory_id": "s3#0", "content": "y", "reason": "x"}, 422, "by_memory_id"),
        ({"by_memory_id": "s3#0"}, 422, "reason"),
        ({"by_memory_id": "s3#0", "reason": "\ufeff\u3000"}, 422, "reason"),
        ({"content": "", "reason": "x"}, 422, "content"),
        ({"content": " \t\u0085\u001c", "reason": "x"}, 422, "content"),
        ({"by_memory_id": "nope", "reason": "x"}, 404, "by_memory_id"),
        ({"by_memory_id": "s3#0", "reason": "x", "extra": 1}, 422, "extra"),
    ],
)
def test_supersede_validation(client, bio, body, status, field):
    r = client.post(f"/v1/spaces/{bio}/memories/{mem('s1#0')}/supersede", json=body)
    assert r.status_code == status, r.text
    assert r.json()["error"]["field"] == field


def test_stage_schema_over_http(client, bio, engine):
    stages = client.get(f"/v1/spaces/{bio}/stages").json()
    first = stages["stages"][0]["id"] if "stages" in stages else None
    assert first
    # not built yet: a 404 naming the schema, and a build queued (reads never build)
    r = client.get(f"/v1/spaces/{bio}/stages/{quote(first, safe='')}/schema")
    assert r.status_code == 404 and r.json()["error"]["field"] == "schema", r.text
    maintenance.schema_refresher(engine).drain()  # what the background worker does
    r = client.get(f"/v1/spaces/{bio}/stages/{quote(first, safe='')}/schema")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["summary"] and body["memory_count"] >= 1 and body["embedding"] is None
    with_vec = client.get(
        f"/v1/spaces/{bio}/stages/{quote(first, safe='')}/schema", params={"embedding": True}
    ).json()
    assert with_vec["rebuilt"] is False and with_vec["stale"] is False
    assert len(with_vec["embedding"]) == 384
    assert client.get(f"/v1/spaces/{bio}/stages/nope/schema").status_code == 404


def test_scheduler_runs_inside_the_app_lifespan(engine):
    import threading

    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.settings import Settings

    settings = Settings(
        neo4j_uri=engine.store.config.uri, scheduler_enabled=True, scheduler_intervals="decay=1h"
    )
    with TestClient(create_app(settings, engine=engine)) as c:
        assert c.get("/healthz").status_code == 200
        assert any(t.name == "mnemograph-scheduler" for t in threading.enumerate())
    assert not any(t.name == "mnemograph-scheduler" for t in threading.enumerate())


def test_a_memory_superseding_itself_is_a_conflict(client, space):
    """Schema-valid either way, refused for what the memory is: a 409 naming the field."""
    r = client.post(f"/v1/spaces/{space}/memories", json={"memories": [{"content": "Ann: Porto."}]})
    assert r.status_code == 201, r.text
    own = r.json()["items"][0]["id"]  # derived from the content
    url = f"/v1/spaces/{space}/memories/{own}/supersede"
    r = client.post(url, json={"content": "Ann: Porto.", "reason": "again"})
    assert r.status_code == 409 and r.json()["error"]["field"] == "content", r.text
    r = client.post(url, json={"by_memory_id": own, "reason": "again"})
    assert r.status_code == 409 and r.json()["error"]["field"] == "by_memory_id", r.text
    detail = client.get(f"/v1/spaces/{space}/memories/{own}").json()
    assert detail["memory"]["status"] == "active"
