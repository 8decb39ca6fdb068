"""Deleting a memory keeps the supersession history of the others (pipelines.consolidate.
history), against a real Neo4j: undone when the deleted memory was the current version,
re-linked past it when it was itself superseded, also under concurrent deletes and reverts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient

from pipelines import browse
from pipelines.consolidate import history
from pipelines.consolidate import supersessions as sup_mod
from pipelines.consolidate.runner import run_job
from pipelines.consolidate.supersessions import (
    SupersedeRequest,
)
from pipelines.engine import Engine
from pipelines.errors import Conflict, NotFound
from pipelines.ingest.service import Ingestor, IngestResult
from tests.integration import test_consolidate_jobs as jobs
from tests.integration.test_consolidate_jobs import BIOGRAPHY, NOW
from tests.integration.threads import race

ingest: Callable[[Engine, str, list[Any]], list[IngestResult]] = jobs.ingest


def supersede_memory(
    engine: Engine, space: str, memory_id: str, *, by_memory_id: str, reason: str
) -> dict[str, Any]:
    request = SupersedeRequest(by_memory_id=by_memory_id, reason=reason)
    out = sup_mod.supersede_memory(engine, Ingestor(engine), space, memory_id, request)
    return out.model_dump()


def revert_supersession(engine: Engine, space: str, supersession_id: str) -> dict[str, Any]:
    return sup_mod.revert_supersession(engine, space, supersession_id).model_dump()


def list_supersessions(engine: Engine, space: str, limit: int) -> list[dict[str, Any]]:
    return [s.model_dump() for s in sup_mod.list_supersessions(engine, space, limit=limit)]


def memory_timeline(engine: Engine, space: str, memory_id: str) -> list[dict[str, Any]]:
    return [e.model_dump() for e in sup_mod.memory_timeline(engine, space, memory_id)]


def delete_memory(engine: Engine, space: str, memory_id: str) -> dict[str, Any]:
    deleted = browse.delete_memory(engine.store, space, memory_id, history.keep_history)
    return deleted.model_dump()


MEMORIES = [f"s1#{i}" for i in range(4)] + [f"s2#{i}" for i in range(3)] + ["s3#0"]


def brief(engine: Engine, space: str, mid: str) -> dict[str, Any] | None:
    rows = engine.store.read("consolidate/memory_brief", space=space, id=mid)
    return rows[0] if rows else None


def status(engine: Engine, space: str, mid: str) -> str:
    b = brief(engine, space, mid)
    assert b is not None, f"memory {mid} is gone"
    return str(b["status"])


def fact_statuses(engine: Engine, space: str) -> dict[str, str]:
    rows = engine.store.read(
        "read/facts_list",
        space=space,
        category=None,
        speaker=None,
        include_superseded=True,
        skip=0,
        limit=10_000,
    )
    return {r["fact"]["id"]: r["fact"]["status"] for r in rows}


def assert_no_orphaned_supersession(engine: Engine, space: str) -> None:
    """Every superseded memory or fact is retired by a supersession record that still exists."""
    sups = list_supersessions(engine, space, limit=500)
    retired = {s["older"] for s in sups} | {f for s in sups for f in s.get("fact_ids") or []}
    for mid in MEMORIES:
        b = brief(engine, space, mid)
        if b is not None and b["status"] == "superseded":
            assert b["superseded_by"], f"{mid} is superseded with no record"
    for fid, status in fact_statuses(engine, space).items():
        if status == "superseded":
            assert fid in retired, f"fact {fid} is superseded with no record"


def test_deleting_the_current_version_undoes_its_supersession(engine: Engine, space: str) -> None:
    ingest(engine, space, BIOGRAPHY)
    facts_before = fact_statuses(engine, space)
    out = supersede_memory(engine, space, "s1#0", by_memory_id="s3#0", reason="moved to Tokyo")
    assert out["fact_ids"] and status(engine, space, "s1#0") == "superseded"
    deleted = delete_memory(engine, space, "s3#0")
    assert deleted["memories"] == 1 and deleted["supersessions_undone"] == 1
    assert status(engine, space, "s1#0") == "active"
    after = fact_statuses(engine, space)
    assert all(after[f] == facts_before[f] for f in out["fact_ids"])  # its facts are back too
    assert_no_orphaned_supersession(engine, space)


def test_deleting_a_middle_version_relinks_the_chain(engine: Engine, space: str) -> None:
    ingest(engine, space, BIOGRAPHY)
    first = supersede_memory(engine, space, "s1#0", by_memory_id="s2#0", reason="Berlin")
    supersede_memory(engine, space, "s2#0", by_memory_id="s3#0", reason="Tokyo")
    deleted = delete_memory(engine, space, "s2#0")
    assert deleted["supersessions_relinked"] == 1 and deleted["supersessions_undone"] == 0
    older = brief(engine, space, "s1#0")
    assert older is not None
    assert older["status"] == "superseded" and older["superseded_by"] == ["s3#0"]
    assert [c["id"] for c in memory_timeline(engine, space, "s1#0")] == ["s1#0", "s3#0"]
    assert_no_orphaned_supersession(engine, space)
    # the record kept its id: reverting it restores the oldest version exactly
    reverted = revert_supersession(engine, space, first["id"])
    assert reverted["newer"] == "s3#0" and reverted["older_status"] == "active"
    assert status(engine, space, "s1#0") == "active"


def test_the_delete_endpoint_reports_what_it_kept(
    client: TestClient, engine: Engine, space: str
) -> None:
    ingest(engine, space, BIOGRAPHY)
    supersede_memory(engine, space, "s1#2", by_memory_id="s2#1", reason="green now")
    r = client.delete(f"/v1/spaces/{space}/memories/s2%231")
    assert r.status_code == 200, r.text
    assert r.json()["deleted"]["supersessions_undone"] == 1
    assert client.get(f"/v1/spaces/{space}/memories/s1%232").json()["memory"]["status"] == (
        "active"
    )


def test_deleting_every_newer_memory_of_the_job_leaves_no_orphan(
    engine: Engine, space: str
) -> None:
    ingest(engine, space, BIOGRAPHY)
    assert run_job(engine, space, "supersede", now=NOW).status == "ok"
    newer = sorted({s["newer"] for s in list_supersessions(engine, space, limit=500)})
    assert newer, "the supersede job found nothing to supersede"
    for mid in newer:
        if brief(engine, space, mid) is None:
            continue  # a fact id: it goes with its memory
        delete_memory(engine, space, mid)
        assert_no_orphaned_supersession(engine, space)


def test_delete_racing_a_revert_keeps_history(engine: Engine, space: str) -> None:
    ingest(engine, space, BIOGRAPHY)
    for k in range(3):
        newer = f"t{k}#0"
        ingest(engine, space, [(f"t{k}", 90 + k, [("user", "Ann", f"I moved to Osaka ({k}).")])])
        sup = supersede_memory(engine, space, "s1#0", by_memory_id=newer, reason="Osaka")
        sid = str(sup["id"])

        def delete(newer: str = newer) -> object:
            return delete_memory(engine, space, newer)

        def revert(sid: str = sid) -> object:
            return revert_supersession(engine, space, sid)

        results = race(delete, revert)
        for r in results:
            assert not isinstance(r, Exception) or isinstance(r, (NotFound, Conflict)), r
        assert status(engine, space, "s1#0") == "active"
        assert_no_orphaned_supersession(engine, space)


def test_deleting_two_versions_at_once_keeps_history(engine: Engine, space: str) -> None:
    ingest(engine, space, BIOGRAPHY)
    supersede_memory(engine, space, "s1#0", by_memory_id="s2#0", reason="Berlin")
    supersede_memory(engine, space, "s2#0", by_memory_id="s3#0", reason="Tokyo")
    results = race(
        lambda: delete_memory(engine, space, "s2#0"),
        lambda: delete_memory(engine, space, "s3#0"),
    )
    assert not any(isinstance(r, Exception) for r in results), results
    # both newer versions are gone, whichever went first: the oldest is current again
    assert status(engine, space, "s1#0") == "active"
    assert_no_orphaned_supersession(engine, space)
