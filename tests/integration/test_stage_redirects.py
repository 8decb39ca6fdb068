"""Stage ids that ingest handed out stay resolvable after the communities job re-groups their
sessions (pipelines.consolidate.stage_redirects), against a real Neo4j: over HTTP, after a
crash half way, and with ingests racing the job in threads."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

from fastapi.testclient import TestClient

from pipelines import browse
from pipelines.consolidate.runner import Runner, run_job
from pipelines.engine import Engine
from pipelines.errors import NotFound
from pipelines.ingest.service import IngestResult
from tests.integration import test_consolidate_jobs as jobs
from tests.integration.test_consolidate_jobs import NOW

ingest: Callable[[Engine, str, list[Any]], list[IngestResult]] = jobs.ingest
topic_sessions: Callable[..., list[Any]] = jobs.topic_sessions
crash_at: Callable[[str], Callable[[str], None]] = jobs.crash_at


def sessions_of(engine: Engine, space: str, stage_id: str) -> set[str]:
    detail = browse.stage(engine.store, space, stage_id, 1000).model_dump(by_alias=True)
    return set(detail["sessions"])


def assert_resolves(engine: Engine, space: str, handed: dict[str, set[str]]) -> None:
    """Every stage id handed out answers, and its sessions live in the stages it points to."""
    for stage_id, members in handed.items():
        detail = browse.stage(engine.store, space, stage_id, 1000).model_dump(by_alias=True)
        stage = detail["stage"]
        if stage["id"] == stage_id:
            continue
        assert stage["redirected_from"] == stage_id
        assert stage["id"] == stage["merged_into"][0]
        now_in: set[str] = set()
        for s in stage["merged_into"]:
            now_in |= sessions_of(engine, space, s)
        assert members <= now_in, (stage_id, members - now_in)


def handed_out(results: Sequence[IngestResult]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in results:
        for sid in r.stage_ids:
            out.setdefault(sid, set()).add(str(r.session_id))
    return out


def test_ids_ingest_returned_resolve_over_http_after_communities(
    client: TestClient, engine: Engine, space: str
) -> None:
    handed = handed_out(ingest(engine, space, topic_sessions()))
    assert all(s.startswith("gap:") for s in handed)
    run = run_job(engine, space, "communities", now=NOW)
    assert run.counts["stages_deleted"] == len(handed)
    assert run.counts["stage_ids_redirected"] == len(handed)
    for stage_id, members in handed.items():
        r = client.get(f"/v1/spaces/{space}/stages/{quote(stage_id, safe='')}")
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["stage"]["redirected_from"] == stage_id
        assert body["stage"]["id"].startswith("community:")
        assert members <= set(body["sessions"])
    assert client.get(f"/v1/spaces/{space}/stages/gap:never").status_code == 404


def test_a_later_sessions_stage_resolves_through_a_second_run(engine: Engine, space: str) -> None:
    handed = handed_out(ingest(engine, space, topic_sessions()))
    run_job(engine, space, "communities", now=NOW)
    handed.update(handed_out(ingest(engine, space, topic_sessions(rounds=1, start_day=40)[:1])))
    run_job(engine, space, "communities", now=NOW)
    assert_resolves(engine, space, handed)


def test_a_crash_half_way_loses_no_redirect(engine: Engine, space: str) -> None:
    handed = handed_out(ingest(engine, space, topic_sessions(rounds=3)))
    crashed = run_job(
        engine,
        space,
        "communities",
        now=NOW,
        runner=Runner(failure_hook=crash_at("communities:sessions:0")),
    )
    assert crashed.status == "failed"
    assert run_job(engine, space, "communities", now=NOW).status == "ok"
    assert_resolves(engine, space, handed)


def test_ingest_racing_the_job_never_loses_a_stage_id(engine: Engine, space: str) -> None:
    handed = handed_out(ingest(engine, space, topic_sessions()))
    lock = threading.Lock()
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        for i in range(3):
            try:
                results = ingest(engine, space, topic_sessions(rounds=1, start_day=50 + 10 * k + i))
            except Exception as exc:  # a refused ingest hands out nothing; it is reported
                with lock:
                    errors.append(exc)
                continue
            with lock:
                for sid, members in handed_out(results).items():
                    handed.setdefault(sid, set()).update(members)

    for _ in range(2):
        threads = [threading.Thread(target=writer, args=(k,)) for k in range(2)]
        jobs = threading.Thread(target=lambda: run_job(engine, space, "communities", now=NOW))
        for t in [*threads, jobs]:
            t.start()
        for t in [*threads, jobs]:
            t.join(300)
    run_job(engine, space, "communities", now=NOW)  # settle whatever arrived last
    assert_resolves(engine, space, handed)
    assert len(errors) < 12, errors  # some ingests went through


def test_an_unknown_stage_is_still_404(engine: Engine, space: str) -> None:
    ingest(engine, space, topic_sessions(rounds=1))
    try:
        browse.stage(engine.store, space, "community:nothing", 10)
    except NotFound as exc:
        assert exc.field == "id"
    else:
        raise AssertionError("an unknown stage id resolved")
