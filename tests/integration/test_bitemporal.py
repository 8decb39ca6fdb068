"""Issue 55 item 2: a supersession has a valid time and a recorded time, against a real Neo4j.

``as_of`` is valid time (the newer memory's event time, or the correction's ``valid_from``),
``known_at`` recorded time (what the server knew). The reproduction: "agent-x uses_model
claude-opus-4-7" (2026-05-01) superseded by "... claude-opus-4-8" (2026-06-02) through the
API; before, ``as_of`` 2026-07-01 showed both versions (the supersession was dated by the API
call), a state that never existed on either clock."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

import graph_schema
from pipelines.consolidate.runner import run_job
from pipelines.engine import Engine
from tests.cypher import statements
from tests.integration.test_consolidate_jobs import BIOGRAPHY, NOW, T0, ingest

OLD, NEW = "agent-x uses_model claude-opus-4-7", "agent-x uses_model claude-opus-4-8"
OLD_TIME, NEW_TIME = datetime(2026, 5, 1, tzinfo=UTC), datetime(2026, 6, 2, tzinfo=UTC)


def _store(client: TestClient, space: str, text: str, time: datetime) -> str:
    r = client.post(
        f"/v1/spaces/{space}/memories",
        json={"memories": [{"content": text, "time": time.isoformat()}], "force": True},
    )
    assert r.status_code == 201, r.text
    return str(r.json()["items"][0]["id"])


def _context(client: TestClient, space: str, **times: datetime) -> str:
    body: dict[str, Any] = {"query": "Which model does agent-x use?", "context_window": 4000}
    body.update({k: v.isoformat() for k, v in times.items()})
    r = client.post(f"/v1/spaces/{space}/context", json=body)
    assert r.status_code == 200, r.text
    return str(r.json()["prompt"])


def _versions(prompt: str) -> set[str]:
    return {v for v in ("claude-opus-4-7", "claude-opus-4-8") if v in prompt}


def _supersede(client: TestClient, space: str, older: str, **body: Any) -> dict[str, Any]:
    r = client.post(
        f"/v1/spaces/{space}/memories/{older}/supersede", json={"reason": "upgrade", **body}
    )
    assert r.status_code == 201, r.text
    return dict(r.json())


@pytest.fixture
def upgrade(client, space) -> tuple[str, str, str, datetime, datetime]:
    """The reproduction's two memories, the second superseding the first through the API;
    with the supersession's id and server times just before and after it was recorded."""
    old = _store(client, space, OLD, OLD_TIME)
    new = _store(client, space, NEW, NEW_TIME)
    before = datetime.now(UTC)
    sup = _supersede(client, space, old, by_memory_id=new)
    after = datetime.now(UTC)
    return old, new, sup["id"], before, after


def test_as_of_is_valid_time(client, space, upgrade) -> None:
    assert _versions(_context(client, space, as_of=datetime(2026, 7, 1, tzinfo=UTC))) == {
        "claude-opus-4-8"
    }
    assert _versions(_context(client, space, as_of=datetime(2026, 5, 15, tzinfo=UTC))) == {
        "claude-opus-4-7"
    }
    assert _versions(_context(client, space)) == {"claude-opus-4-8"}


def test_known_at_is_recorded_time(client, space, upgrade) -> None:
    _, _, _, before, after = upgrade
    # the server knew both memories, not yet the supersession: the older is shown
    assert "claude-opus-4-7" in _versions(_context(client, space, known_at=before))
    assert _versions(_context(client, space, known_at=after)) == {"claude-opus-4-8"}
    # both clocks: true on 2026-07-01 as known before / after the supersession was recorded
    july = datetime(2026, 7, 1, tzinfo=UTC)
    assert "claude-opus-4-7" in _versions(_context(client, space, as_of=july, known_at=before))
    assert _versions(_context(client, space, as_of=july, known_at=after)) == {"claude-opus-4-8"}
    # before the memories were stored the server knew nothing of them
    assert _versions(_context(client, space, known_at=before - timedelta(days=1))) == set()


def test_the_supersession_carries_both_times_and_revert_reports_them(
    client, space, upgrade
) -> None:
    _, _, sid, before, after = upgrade
    got = client.get(f"/v1/spaces/{space}/supersessions/{sid}").json()
    assert datetime.fromisoformat(got["valid_from"]) == NEW_TIME
    assert before <= datetime.fromisoformat(got["recorded_at"]) <= after
    r = client.post(f"/v1/spaces/{space}/supersessions/{sid}/revert")
    assert r.status_code == 200, r.text
    assert (r.json()["valid_from"], r.json()["recorded_at"]) == (
        got["valid_from"],
        got["recorded_at"],
    )
    # reverted: both versions are current again
    assert _versions(_context(client, space)) == {"claude-opus-4-7", "claude-opus-4-8"}


def test_an_explicit_valid_from_dates_the_supersession(client, space) -> None:
    old = _store(client, space, OLD, OLD_TIME)
    new = _store(client, space, NEW, NEW_TIME)
    sup = _supersede(client, space, old, by_memory_id=new, valid_from="2026-06-15T00:00:00Z")
    assert datetime.fromisoformat(sup["valid_from"]) == datetime(2026, 6, 15, tzinfo=UTC)
    june10, june20 = datetime(2026, 6, 10, tzinfo=UTC), datetime(2026, 6, 20, tzinfo=UTC)
    assert "claude-opus-4-7" in _versions(_context(client, space, as_of=june10))
    assert _versions(_context(client, space, as_of=june20)) == {"claude-opus-4-8"}
    # new content with valid_from: the correction memory is dated by it too
    third = _supersede(
        client,
        space,
        new,
        content="agent-x uses_model claude-opus-5-0",
        valid_from="2026-08-01T00:00:00Z",
    )
    memory = client.get(f"/v1/spaces/{space}/memories/{third['created_memory']}").json()
    assert json.dumps(memory).count("2026-08-01T00:00:00") >= 1


def test_automatic_supersessions_are_valid_from_the_newer_memory(engine, space) -> None:
    ingest(engine, space, BIOGRAPHY)
    run_job(engine, space, "supersede", now=NOW)
    rows = engine.store.read(
        "consolidate/supersession_list", space=space, by=None, skip=0, limit=50
    )
    assert rows, "the job wrote no supersession"
    for r in rows:
        sup = r["supersession"]
        memory = r["newer"].split("#f")[0]  # a fact id is "<memory>#f<n>"
        session, turn = memory.split("#")
        day = next(d for s, d, _ in BIOGRAPHY if s == session)
        event_time = T0 + timedelta(days=day, minutes=int(turn))
        assert datetime.fromisoformat(sup["valid_from"]) == event_time
        assert datetime.fromisoformat(sup["recorded_at"]) == NOW


def test_migration_dates_old_supersessions(engine: Engine, client, space, upgrade) -> None:
    sid = upgrade[2]
    statements(engine.store).write("consolidate/strip_supersession_times", space=space, id=sid)
    migration = next(t for n, _, t in graph_schema.migrations() if n == "0008_supersession_times")
    for statement in graph_schema._statements(migration):  # as graph_schema.apply runs it
        engine.store.run_schema(statement)
    got = client.get(f"/v1/spaces/{space}/supersessions/{sid}").json()
    assert datetime.fromisoformat(got["valid_from"]) == NEW_TIME
    assert got["recorded_at"] is not None


def test_export_import_keeps_both_times(client, space, upgrade) -> None:
    _, _, sid, _, _ = upgrade
    lines = client.get(f"/v1/spaces/{space}/export").text.splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    rel = next(r for r in records if r["type"] == "rel" and r["props"].get("id") == sid)
    assert {"valid_from", "recorded_at"} <= set(rel["props"])
    dst = f"{space}-im"
    assert client.post("/v1/spaces", json={"id": dst}).status_code == 201
    try:
        r = client.post(f"/v1/spaces/{dst}/import", json={"records": records})
        assert r.status_code == 200, r.text
        src_sup = client.get(f"/v1/spaces/{space}/supersessions/{sid}").json()
        dst_sup = client.get(f"/v1/spaces/{dst}/supersessions/{sid}").json()
        assert (dst_sup["valid_from"], dst_sup["recorded_at"]) == (
            src_sup["valid_from"],
            src_sup["recorded_at"],
        )
        assert _versions(_context(client, dst, as_of=datetime(2026, 5, 15, tzinfo=UTC))) == {
            "claude-opus-4-7"
        }
    finally:
        client.delete(f"/v1/spaces/{dst}")


def _recalled(client: TestClient, space: str, **times: datetime) -> set[str]:
    body: dict[str, Any] = {"query": "agent-x uses_model", "k": 5, "touch": False}
    body.update({k: v.isoformat() for k, v in times.items()})
    r = client.post(f"/v1/spaces/{space}/recall", json=body)
    assert r.status_code == 200, r.text
    return {hit["id"] for hit in r.json()["results"]}


def test_recall_reads_both_clocks(client, space, upgrade) -> None:
    old, new, _, before, after = upgrade
    assert _recalled(client, space) == {new}
    assert _recalled(client, space, as_of=datetime(2026, 7, 1, tzinfo=UTC)) == {new}
    assert _recalled(client, space, as_of=datetime(2026, 5, 15, tzinfo=UTC)) == {old}
    assert _recalled(client, space, known_at=before) == {old, new}
    assert _recalled(client, space, known_at=after) == {new}
    assert _recalled(client, space, known_at=before - timedelta(days=1)) == set()
