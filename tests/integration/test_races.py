"""Races on the write path, against a real Neo4j with real threads.

Every write transaction into a space first takes the space's write lock
(``spaces.lock_for_write``); erasure marks the space under the same lock.

* **Erasure vs in-flight ingest**: ``DELETE`` of a space while a session ingest into it is in
  flight must never leave the ingest's nodes behind without their space; a space re-created
  with the same id starts empty.
* **Concurrent identical posts**: the same session (same ids, same content) posted twice at the
  same moment: both succeed, one stored and one ``unchanged``.
* **Concurrent conflicting posts**: the same ids with different content: one succeeds, the
  other is a 409 (:class:`~pipelines.errors.Conflict`), never a driver error.
* **Concurrent ingest into one space**: different sessions into one space from several threads
  all succeed (they queue on the space's write lock).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient

from pipelines import spaces
from pipelines.engine import Engine
from pipelines.errors import Conflict, DomainError, NotFound
from pipelines.ingest.service import Ingestor, IngestResult, SessionIn, TurnIn
from pipelines.spaces import NewSpace
from tests.integration.threads import race

T0 = datetime(2024, 3, 1, 9, tzinfo=UTC)
LINES = [
    "I adopted a puppy called Biscuit from the shelter in Leeds.",
    "Biscuit chewed through the charging cable of my Lenovo laptop.",
    "We are training Biscuit with the clicker method Karen recommended.",
    "The vet in Headingley said Biscuit needs her second vaccination.",
    "I ordered a crate from Amazon and a bag of salmon kibble.",
]


def session(sid: str, n: int, salt: str = "") -> SessionIn:
    return SessionIn(
        sid,
        [
            TurnIn(
                "user" if i % 2 == 0 else "assistant",
                f"{LINES[i % len(LINES)]}{salt}",
                id=f"{sid}-t{i}",
                speaker="Ann" if i % 2 == 0 else "Bot",
                time=T0 + timedelta(minutes=i),
            )
            for i in range(n)
        ],
    )


@pytest.mark.parametrize("delay", [0.0, 0.5, 1.5, 3.0])
def test_erasure_is_final_even_with_an_ingest_in_flight(engine: Engine, delay: float) -> None:
    space = f"erase-{uuid.uuid4().hex[:8]}"
    spaces.create(engine.store, NewSpace(id=space))
    ingestor = Ingestor(engine)
    results = race(
        lambda: ingestor.ingest_session(space, session("big", 300)),
        lambda: spaces.delete(engine.store, space),
        delays=(0.0, delay),
    )
    ingested, deleted = results
    assert not isinstance(deleted, Exception) or isinstance(deleted, NotFound), deleted
    assert not isinstance(ingested, Exception) or isinstance(ingested, DomainError), ingested
    leftover = spaces.counts(engine.store, space)
    if isinstance(deleted, dict):  # the erasure answered: nothing of the space may remain
        assert not any(leftover.values()), (leftover, ingested)
    created = spaces.create(engine.store, NewSpace(id=space))[1]
    try:
        assert created is True or not isinstance(deleted, dict)
        if isinstance(deleted, dict):
            assert not any(spaces.counts(engine.store, space).values())
    finally:
        spaces.delete(engine.store, space)


def test_identical_concurrent_posts_both_succeed(engine: Engine, space: str) -> None:
    ingestor = Ingestor(engine)
    for k in range(5):
        s = session(f"same-{k}", 20)

        def post(s: SessionIn = s) -> object:
            return ingestor.ingest_session(space, s)

        results = race(post, post)
        assert all(isinstance(r, IngestResult) for r in results), results
        decisions = sorted(
            ",".join(sorted({i.decision for i in r.items}))
            for r in results
            if isinstance(r, IngestResult)
        )
        assert decisions == ["stored", "unchanged"], decisions


def test_conflicting_concurrent_posts_give_one_201_and_one_409(engine: Engine, space: str) -> None:
    ingestor = Ingestor(engine)
    for k in range(5):
        a, b = session(f"clash-{k}", 20), session(f"clash-{k}", 20, salt=" (edited)")

        def post_a(a: SessionIn = a) -> object:
            return ingestor.ingest_session(space, a)

        def post_b(b: SessionIn = b) -> object:
            return ingestor.ingest_session(space, b)

        results = race(post_a, post_b)
        kinds = sorted(type(r).__name__ for r in results)
        assert kinds == sorted([IngestResult.__name__, Conflict.__name__]), results


def test_concurrent_ingest_into_one_space_all_succeeds(engine: Engine, space: str) -> None:
    ingestor = Ingestor(engine)
    results = race(
        *[lambda k=k: ingestor.ingest_session(space, session(f"w{k}", 20)) for k in range(4)]
    )
    assert all(isinstance(r, IngestResult) for r in results), results
    assert spaces.counts(engine.store, space)["memories"] == 80


def test_an_interrupted_erasure_refuses_writes_and_the_next_delete_finishes_it(
    engine: Engine, client: TestClient
) -> None:
    space = f"erase-{uuid.uuid4().hex[:8]}"
    spaces.create(engine.store, NewSpace(id=space))
    Ingestor(engine).ingest_session(space, session("before", 4))
    engine.store.write("spaces/mark_erasing", space=space)  # a DELETE that died right after
    turns = [{"role": "user", "content": "still here?"}]
    r = client.post(f"/v1/spaces/{space}/sessions", json={"session_id": "late", "turns": turns})
    assert r.status_code == 404 and r.json()["error"]["field"] == "space", r.text
    assert client.get(f"/v1/spaces/{space}").status_code == 404
    assert space not in [s["id"] for s in client.get("/v1/spaces").json()["spaces"]]
    r = client.post("/v1/spaces", json={"id": space})
    assert r.status_code == 409 and r.json()["error"]["field"] == "id", r.text
    r = client.delete(f"/v1/spaces/{space}")
    assert r.status_code == 200, r.text
    assert not any(spaces.counts(engine.store, space).values())
    assert client.post("/v1/spaces", json={"id": space}).json()["created"] is True
    assert client.delete(f"/v1/spaces/{space}").status_code == 200


def test_erasure_over_http_during_an_ingest_leaves_nothing(client: TestClient) -> None:
    space = f"erase-{uuid.uuid4().hex[:8]}"
    assert client.post("/v1/spaces", json={"id": space}).status_code == 201
    turns = [{"role": "user", "content": f"{LINES[i % len(LINES)]} ({i})"} for i in range(200)]
    ingested, deleted = race(
        lambda: client.post(
            f"/v1/spaces/{space}/sessions", json={"session_id": "big", "turns": turns}
        ),
        lambda: client.delete(f"/v1/spaces/{space}"),
        delays=(0.0, 1.0),
    )
    assert getattr(deleted, "status_code", None) == 200, deleted
    assert getattr(ingested, "status_code", None) in (201, 404), ingested
    assert client.post("/v1/spaces", json={"id": space}).json()["created"] is True
    try:
        counts = client.get(f"/v1/spaces/{space}").json()["counts"]
        assert not any(counts.values()), counts
    finally:
        client.delete(f"/v1/spaces/{space}")


def test_an_import_into_a_space_being_erased_is_refused(engine: Engine) -> None:
    from pipelines.transfer import export, load

    space = f"erase-{uuid.uuid4().hex[:8]}"
    spaces.create(engine.store, NewSpace(id=space))
    Ingestor(engine).ingest_session(space, session("before", 4))
    records = list(export.records(engine.store, space))
    engine.store.write("spaces/mark_erasing", space=space)  # a DELETE in progress
    with pytest.raises(NotFound):
        load.import_records(engine.store, engine.embedder, Ingestor(engine).config, space, records)
    assert engine.store.read("spaces/get", space=space) == []  # still being erased
    spaces.delete(engine.store, space)
    assert not any(spaces.counts(engine.store, space).values())


# jobs whose first checkpoint comes between two of their writes on this data
@pytest.mark.parametrize("job", ["communities", "merge"])
def test_a_job_running_when_an_erasure_starts_writes_nothing_more(engine: Engine, job: str) -> None:
    """A DELETE starts (the space is marked as being erased) at the job's first checkpoint,
    between two of its writes: every later write of the job is refused (the run fails), and
    once the erasure finishes nothing of the space remains."""
    from pipelines.consolidate.runner import Runner, run_job
    from tests.cypher import statements

    space = f"erase-job-{uuid.uuid4().hex[:8]}"
    spaces.create(engine.store, NewSpace(id=space))
    ingestor = Ingestor(engine)
    for k in range(6):
        ingestor.ingest_session(space, session(f"s{k}", 6, salt=f" (week {k})"))
    marked: list[str] = []

    def erasure_starts(label: str) -> None:
        if not marked:
            engine.store.write("spaces/mark_erasing", space=space)
            marked.append(label)

    run = run_job(engine, space, job, runner=Runner(failure_hook=erasure_starts))
    assert marked, f"{job} reached no checkpoint: the race was not run"
    assert run.status == "failed", (job, run)
    assert any("does not exist" in e for e in run.errors), run.errors
    spaces.delete(engine.store, space)  # the DELETE finishes
    left = statements(engine.store).read("spaces/any_left", space=space)[0]
    assert left["nodes"] == 0, (job, left)


def test_a_revert_is_refused_in_a_space_being_erased(engine: Engine) -> None:
    from pipelines.consolidate import supersessions

    space = f"erase-sup-{uuid.uuid4().hex[:8]}"
    spaces.create(engine.store, NewSpace(id=space))
    ingestor = Ingestor(engine)
    ingestor.ingest_session(space, session("s", 4))
    request = supersessions.SupersedeRequest(by_memory_id="s-t2", reason="moved")
    done = supersessions.supersede_memory(engine, ingestor, space, "s-t0", request)
    engine.store.write("spaces/mark_erasing", space=space)  # a DELETE in progress
    with pytest.raises(NotFound):
        supersessions.revert_supersession(engine, space, done.id)
    spaces.delete(engine.store, space)
    assert not any(spaces.counts(engine.store, space).values())
