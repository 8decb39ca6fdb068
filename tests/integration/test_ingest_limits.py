"""Bounded ingest work against a real Neo4j: a request needing more texts embedded than the
limit is refused (422 naming where to split it), one past its deadline answers 503 with
nothing written, a multi-session call stopped midway names what it committed, and a client
that disconnects stops the work."""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from pipelines.engine import Engine
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG
from pipelines.ingest.deadline import ClientGone, Deadline
from pipelines.ingest.service import Ingestor, SessionIn, TurnIn
from tests.integration.conftest import Live

LIMIT = 3  # texts the strict server embeds per request


@pytest.fixture(scope="module")
def strict(engine: Engine) -> Iterator[TestClient]:
    """A server that embeds at most LIMIT texts per request and whose deadline has always
    passed by the time the work starts."""
    settings = Settings(
        neo4j_uri=engine.store.config.uri,
        ingest_deadline_seconds=1e-6,
        ingest_max_embedding_inputs=LIMIT,
    )
    with TestClient(create_app(settings, engine=engine)) as c:
        yield c


def notes(*texts: str) -> dict[str, Any]:
    return {"memories": [{"id": f"n{i}", "content": t} for i, t in enumerate(texts)]}


def counts(client: TestClient, space: str) -> dict[str, int]:
    body: dict[str, int] = client.get(f"/v1/spaces/{space}").json()["counts"]
    return body


def test_a_request_over_the_work_limit_is_refused_naming_where_to_split_it(
    strict: TestClient, space: str
) -> None:
    r = strict.post(f"/v1/spaces/{space}/memories", json=notes(*"abcde"))
    error = r.json()["error"]
    assert r.status_code == 422 and error["field"] == "memories.3", r.text
    assert (
        "needs 5 texts embedded" in error["message"] and "before memories.3 fit" in error["message"]
    )
    turns = [{"role": "user", "content": f"turn {i}"} for i in range(4)]
    r = strict.post(f"/v1/spaces/{space}/sessions", json={"session_id": "s", "turns": turns})
    assert r.status_code == 422 and r.json()["error"]["field"] == "turns.3"
    assert "same session_id" in r.json()["error"]["message"]
    long = " ".join(f"word{i} of a long note about Lisbon and Porto." for i in range(300))
    r = strict.post(f"/v1/spaces/{space}/memories", json=notes("short", long))
    error = r.json()["error"]
    assert r.status_code == 422 and error["field"] == "memories.1.content", r.text
    assert "alone needs" in error["message"] and "characters" in error["message"]
    assert counts(strict, space)["memories"] == 0


def test_past_its_deadline_a_request_answers_503_and_writes_nothing(
    strict: TestClient, client: TestClient, space: str
) -> None:
    turns = [{"role": "user", "content": "I moved to Porto in May."}]
    r = strict.post(f"/v1/spaces/{space}/sessions", json={"session_id": "s1", "turns": turns})
    assert r.status_code == 503 and r.headers["Retry-After"] == "1", r.text
    error = r.json()["error"]
    assert error["code"] == "deadline_exceeded" and "nothing was written" in error["message"]
    assert error["may_have_committed"] is False  # stopped before its write transaction
    r = strict.post(f"/v1/spaces/{space}/memories", json=notes("Porto is by the sea."))
    assert r.status_code == 503 and r.json()["error"]["code"] == "deadline_exceeded"
    assert counts(client, space)["memories"] == 0 and counts(client, space)["sessions"] == 0
    # the same requests without the deadline; items already stored do not count as work
    assert client.post(f"/v1/spaces/{space}/memories", json=notes(*"abc")).status_code == 201
    r = strict.post(f"/v1/spaces/{space}/memories", json=notes(*"abcde"))
    assert r.status_code == 503, r.text  # two new texts: within the limit, then the deadline
    assert counts(client, space)["memories"] == 3


def _stop_once_stored(engine: Engine, space: str, group_turns: int) -> tuple[ClientGone, list[str]]:
    """Sessions a, b, c (one turn each) in one call whose client "leaves" once anything is
    committed: the error raised, and the memory ids stored."""
    ids = ["a#0", "b#0", "c#0"]

    def stored() -> bool:
        return bool(engine.store.read("ingest/existing_memories", space=space, ids=ids))

    sessions = [SessionIn(sid, [TurnIn("user", f"Note {sid}.")]) for sid in ("a", "b", "c")]
    config = DEFAULT_INGEST_CONFIG.model_copy(update={"group_turns": group_turns})
    with pytest.raises(ClientGone) as stopped:
        Ingestor(engine, config).ingest_sessions(
            space, sessions, deadline=Deadline.after(600, stored)
        )
    rows = engine.store.read("ingest/existing_memories", space=space, ids=ids)
    return stopped.value, sorted(r["id"] for r in rows)


def test_a_multi_session_call_stopped_midway_names_what_it_committed(
    engine: Engine, space: str
) -> None:
    stopped, kept = _stop_once_stored(engine, space, group_turns=1)
    assert stopped.field == "sessions.1"
    assert "sessions 0 to 0 of 3 were stored" in stopped.message
    assert kept == ["a#0"]


def test_a_group_of_sessions_is_committed_whole(engine: Engine, space: str) -> None:
    stopped, kept = _stop_once_stored(engine, space, group_turns=2)
    assert stopped.field == "sessions.2"
    assert "sessions 0 to 1 of 3 were stored" in stopped.message
    assert kept == ["a#0", "b#0"]


def test_a_client_that_disconnects_stops_the_work(live: Live) -> None:
    space = f"t-{uuid.uuid4().hex[:10]}"
    assert httpx.post(f"{live.url}/v1/spaces", json={"id": space}).status_code == 201
    text = " ".join(f"Line {i}: the ferry to Porto leaves at nine." for i in range(1_000))
    body = httpx.Request("POST", "/", json=notes(text)).content
    url = urlsplit(live.url)
    head = (
        f"POST /v1/spaces/{space}/memories HTTP/1.1\r\nHost: {url.netloc}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    try:
        with socket.create_connection((url.hostname, url.port)) as s:
            s.sendall(head.encode() + body)
            time.sleep(0.5)  # the body is read and the work has started
        route = 'route="/v1/spaces/{space}/memories"'
        stopped = False
        for _ in range(300):  # until the work notices (its next check) or finishes
            metrics = httpx.get(f"{live.url}/metrics").text
            stopped = any(route in ln and 'status="499"' in ln for ln in metrics.splitlines())
            stored = httpx.get(f"{live.url}/v1/spaces/{space}").json()["counts"]["memories"]
            if stopped or stored:
                break
            time.sleep(0.1)
        assert stopped and not stored, "the disconnected request was not stopped"
    finally:
        httpx.delete(f"{live.url}/v1/spaces/{space}")
