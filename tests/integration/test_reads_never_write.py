"""Reads never write (issue 54): recall, context and every GET route served by an app whose
store opens every session in READ access mode, so Neo4j itself refuses any write; recall's
access statistics written behind the read path, bounded, and never failing a read.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from neo4j.exceptions import ClientError

from app.main import create_app
from app.settings import Settings
from pipelines import maintenance
from pipelines.access_log import AccessLog
from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.request import ContextRequest
from pipelines.assemble.service import Assembler
from pipelines.engine import Engine
from pipelines.graph import GraphStore, ReadOnlyStore
from pipelines.recall.service import Recaller, RecallRequest
from tests.cypher import statements
from tests.integration.test_context_assembly import CONVERSATION, DENSE_ENOUGH, _ingest

LATER = [  # a second visit to "trip" (its schema goes stale) and a new stage (none built)
    (
        "s4",
        "trip",
        9,
        [("user", "Anna", "We booked the Memmo hotel in Alfama for the Lisbon trip.")],
    ),
    (
        "s5",
        "choir",
        10,
        [("user", "Anna", "I joined a choir; we rehearse Bach on Thursdays.")],
    ),
]


@pytest.fixture(scope="module")
def seeded(client) -> Iterator[str]:
    """A space seeded through the normal app: three stages with schemas built by the job, then
    a stale one and one never built."""
    space = f"ro-{uuid.uuid4().hex[:10]}"
    r = client.post("/v1/spaces", json={"id": space, "settings": {"assembly": DENSE_ENOUGH}})
    assert r.status_code == 201, r.text
    _ingest(client, space)  # runs the schemas job
    _ingest(client, space, LATER, schemas=False)
    yield space
    client.delete(f"/v1/spaces/{space}")


@pytest.fixture(scope="module")
def read_only(engine) -> Iterator[tuple[TestClient, Engine]]:
    """An app on a second driver whose every session is READ: Neo4j refuses any write."""
    store = GraphStore(replace(engine.store.config, read_only=True))
    ro = Engine(store, engine.models)
    ro.access = AccessLog(store, autostart=False)  # flushed by hand below
    app = create_app(Settings(neo4j_uri=store.config.uri), engine=ro)
    with TestClient(app) as c:
        yield c, ro
    ro.close()


def test_the_read_only_store_refuses_writes_and_so_does_neo4j(read_only):
    """Asking for a write transaction is refused at once; a write statement sent as a read
    reaches Neo4j, which refuses it (READ access mode)."""
    _, ro = read_only
    with pytest.raises(ReadOnlyStore):
        ro.store.write("recall/touch", space="none", rows=[{"id": "x", "heat": 0.5}], now=None)
    with pytest.raises(ClientError, match="read access mode"):
        statements(ro.store).read("recall/set_heat", space="none", id="none", heat=0.5)


def _ids(seeded: str, client) -> dict[str, str]:
    """Real ids of the seeded space for the GET routes' path parameters."""
    stages = {s["id"] for s in client.get(f"/v1/spaces/{seeded}/stages").json()["stages"]}
    assert "label:trip" in stages
    entities = client.get(f"/v1/spaces/{seeded}/entities").json()["entities"]
    runs = client.get(f"/v1/spaces/{seeded}/jobs").json()["runs"]
    return {
        "space": seeded,
        "memory_id": "s1#0",
        "stage_id": "label:trip",  # its schema is stale
        "key": entities[0]["key"],
        "run_id": runs[0]["id"],
        "merge_id": "nope",
        "supersession_id": "nope",
    }


def test_recall_context_and_every_get_through_a_read_only_store(client, seeded, read_only):
    ro_client, ro = read_only
    # recall with default options (touch on): answered, the access only queued
    r = ro_client.post(f"/v1/spaces/{seeded}/recall", json={"query": "Lisbon hotel Alfama"})
    assert r.status_code == 200, r.text
    assert r.json()["results"]
    assert ro.access.size() >= 1
    # context: staged (named stage: Phase 3 meets a stale and an unbuilt summary) and flat
    for body in (
        {"query": "How is the Orion migration going?", "context_window": 8000, "stage": "orion"},
        {"query": "Summarize everything we talked about", "context_window": 3000},
        {"query": "What did Clara suggest?", "context_window": 4000},
    ):
        r = ro_client.post(f"/v1/spaces/{seeded}/context", json=body)
        assert r.status_code == 200, r.text
    # every GET route of the OpenAPI document, with real ids (and 404s for made-up ones)
    ids = _ids(seeded, client)
    paths = [p for p, ops in ro_client.get("/openapi.json").json()["paths"].items() if "get" in ops]
    assert len(paths) >= 20
    for path in paths:
        url = re.sub(r"\{(\w+)\}", lambda m: quote(ids[m.group(1)], safe=""), path)
        r = ro_client.get(url)
        assert r.status_code < 300 or r.status_code == 404, (path, r.status_code, r.text)
        assert r.status_code < 500, (path, r.text)
    # the access is written by a writer, never by the read: on this store it fails, counted
    assert ro.access.flush() == 0
    assert ro.access.stats()["failed_flushes"] >= 1 and ro.access.size() == 0
    metrics = ro_client.get("/metrics").text
    failed = re.search(r"^mnemograph_access_log_failed_flushes_total (\S+)$", metrics, re.M)
    assert failed and float(failed.group(1)) >= 1, metrics[-2000:]
    assert re.search(r"^mnemograph_schema_refresher_queued \S+$", metrics, re.M)


def test_stage_schema_get_says_stale_or_not_built_and_queues_a_build(client, seeded, engine):
    stages = {name: f"label:{name}" for name in ("orion", "trip", "choir")}
    url = f"/v1/spaces/{seeded}/stages/{{}}/schema"
    fresh = client.get(url.format(quote(stages["orion"], safe="")))
    assert fresh.status_code == 200 and fresh.json()["stale"] is False, fresh.text
    stale = client.get(url.format(quote(stages["trip"], safe="")))
    assert stale.status_code == 200 and stale.json()["stale"] is True, stale.text
    missing = client.get(url.format(quote(stages["choir"], safe="")))
    assert missing.status_code == 404, missing.text
    assert missing.json()["error"]["field"] == "schema"
    maintenance.schema_refresher(engine).drain()  # the background worker's job
    assert client.get(url.format(quote(stages["trip"], safe=""))).json()["stale"] is False
    assert client.get(url.format(quote(stages["choir"], safe=""))).status_code == 200


def test_context_says_which_summaries_were_not_built(engine, unbuilt):
    """Phase 3 over stages without a schema: left out, counted, and queued for a build."""
    with ThreadPoolExecutor(4) as pool:
        assembler = Assembler(
            engine,
            read_ahead=pool,
            config=AssemblyConfig(related_recall_weight=0, related_ppr_weight=0),
        )
        request = ContextRequest(
            query="How is the Orion migration going?", context_window=8000, stage="orion"
        )
        phase = assembler.assemble(unbuilt, request)
        p3 = phase.report.as_dict()["phases"]["stage_summaries"]
        assert p3["unbuilt_summaries"] == 2 and p3["included_stages"] == [], p3
        maintenance.schema_refresher(engine).drain()  # the background worker's job
        again = assembler.assemble(unbuilt, request)
        p3 = again.report.as_dict()["phases"]["stage_summaries"]
        assert "unbuilt_summaries" not in p3 and "stale_summaries" not in p3
        assert p3["included_stages"] == ["label:trip", "label:garden"]


@pytest.fixture
def unbuilt(client) -> Iterator[str]:
    """A space whose stages have no schema built at all (nothing ran the job)."""
    space = f"ro-{uuid.uuid4().hex[:10]}"
    r = client.post("/v1/spaces", json={"id": space, "settings": {"assembly": DENSE_ENOUGH}})
    assert r.status_code == 201, r.text
    _ingest(client, space, CONVERSATION, schemas=False)
    yield space
    client.delete(f"/v1/spaces/{space}")


# ----------------------------------------------------------------------------- access log


def _state(engine, space, mid):
    return statements(engine.store).read("recall/memory_state", space=space, ids=[mid])[0]


def _recaller_with(engine, log: AccessLog) -> Recaller:
    other = Engine(engine.store, engine.models)  # same store and models, its own access log
    other.access = log
    return Recaller(other)


def test_recall_returns_before_its_accesses_are_written(engine, seeded):
    log = AccessLog(engine.store, autostart=False)
    recaller = _recaller_with(engine, log)
    query = RecallRequest(query="We booked the Memmo hotel in Alfama", k=1)
    first = recaller.recall(seeded, query).results[0].id
    before = _state(engine, seeded, first)
    again = recaller.recall(seeded, query).results[0].id
    assert again == first
    assert _state(engine, seeded, first) == before  # nothing written by the reads
    queued = log.pending(seeded, [first])[first]
    assert queued.count == 2
    assert log.flush() == 1
    after = _state(engine, seeded, first)
    assert after["access_count"] == (before["access_count"] or 0) + 2
    assert after["last_access"] is not None and after["heat"] == pytest.approx(queued.heat)
    assert log.stats()["written"] == 1 and log.size() == 0


def test_a_full_queue_drops_new_accesses_and_counts_them(engine):
    log = AccessLog(engine.store, capacity=2, autostart=False)
    now = datetime.now(UTC)
    assert log.record("sp", [("a", 0.1), ("b", 0.2), ("c", 0.3)], now) == 1
    assert log.record("sp", [("a", 0.4)], now) == 0  # a queued memory: merged, not dropped
    assert log.pending("sp", ["a", "b", "c"]).keys() == {"a", "b"}
    assert log.stats()["dropped"] == 1 and log.stats()["queued"] == 2


def test_a_failed_flush_never_reaches_a_read(engine, seeded):
    dead = GraphStore(engine.store.config)
    dead.close()  # a closed driver: every write fails
    log = AccessLog(dead, autostart=False)
    recaller = _recaller_with(engine, log)
    got = recaller.recall(seeded, RecallRequest(query="choir Bach rehearsal", k=2))
    assert got.results and log.size() >= 1
    queued = log.size()
    assert log.flush() == 0
    assert log.stats()["failed_flushes"] == 1 and log.stats()["lost"] == queued
    assert recaller.recall(seeded, RecallRequest(query="choir Bach rehearsal", k=2)).results
