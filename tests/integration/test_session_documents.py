"""Session documents (pipelines.session_documents) and the session-level search of recall,
against a real Neo4j: built at ingest, rebuilt when memories are deleted (API, retention),
restored by the migration's data step, used by preset ``full`` only, never across spaces and
never by a recall bounded in time."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from benchmarks.presets import FUSED_RERANK
from pipelines import schema_data
from pipelines import spaces as space_ops
from pipelines.ingest.service import Ingestor, MemoryIn, SessionIn, TurnIn
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.presets import RecallPreset
from pipelines.recall.service import Recaller, RecallFilters, RecallRequest
from tests.cypher import statements

T0 = datetime(2024, 1, 10, 9, 0, tzinfo=UTC)

# Session "garden" talks about tomatoes, basil and a greenhouse across several turns; session
# "chat" has the single turn that matches the question best on its own.
GARDEN = [
    ("Ann", "user", "The greenhouse is finally finished, glass roof and all."),
    ("Bob", "assistant", "Great! What will you grow in it first?"),
    ("Ann", "user", "Tomatoes along the south wall, and basil in pots by the door."),
    ("Bob", "assistant", "Basil loves the warmth next to tomatoes."),
]
CHAT = [
    ("Ann", "user", "I watched a documentary about a tomato farm and a basil farm."),
    ("Bob", "assistant", "Was it any good?"),
    ("Ann", "user", "The cinematography was lovely, the narration less so."),
]
QUESTION = "What does Ann grow in the greenhouse, tomatoes or basil?"


def _session(sid: str, rows, day: int) -> SessionIn:
    return SessionIn(
        sid,
        [
            TurnIn(role, text, speaker=speaker, time=T0 + timedelta(days=day, minutes=i))
            for i, (speaker, role, text) in enumerate(rows)
        ],
    )


def _documents(engine, space: str) -> dict[str, dict]:
    rows = statements(engine.store).read("ingest/read_session_documents", space=space)
    return {r["id"]: {"texts": sorted(r["texts"] or []), "tag": r["space_tag"]} for r in rows}


def _texts(rows) -> list[str]:
    return sorted(text for _, _, text in rows)


@pytest.fixture
def garden(engine, client):
    space = f"sd-{uuid.uuid4().hex[:8]}"
    assert client.post("/v1/spaces", json={"id": space}).status_code == 201
    Ingestor(engine).ingest_sessions(
        space, [_session("garden", GARDEN, 0), _session("chat", CHAT, 3)]
    )
    yield space
    client.delete(f"/v1/spaces/{space}")


def test_ingest_builds_each_sessions_document(engine, garden):
    docs = _documents(engine, garden)
    tag = space_ops.fulltext_tag(garden)
    assert docs == {
        "chat": {"texts": _texts(CHAT), "tag": tag},
        "garden": {"texts": _texts(GARDEN), "tag": tag},
    }
    # a new turn of an existing session (sent again whole) joins its document; a note
    # without a session changes no document
    more = [("Ann", "user", "The cucumbers went in last week.")]
    ingestor = Ingestor(engine)
    ingestor.ingest_sessions(garden, [_session("garden", GARDEN + more, 0)])
    ingestor.add_memories(garden, [MemoryIn(content="Ann's greenhouse key is under the mat.")])
    docs = _documents(engine, garden)
    assert docs["garden"]["texts"] == _texts(GARDEN + more)
    assert docs["chat"]["texts"] == _texts(CHAT)


def test_a_session_document_keeps_only_its_latest_memories(engine, client):
    from pipelines.ingest.config import DEFAULT_INGEST_CONFIG

    space = f"sd-{uuid.uuid4().hex[:8]}"
    assert client.post("/v1/spaces", json={"id": space}).status_code == 201
    try:
        capped = DEFAULT_INGEST_CONFIG.model_copy(update={"session_document_max_memories": 2})
        Ingestor(engine, capped).ingest_sessions(space, [_session("garden", GARDEN, 0)])
        assert _documents(engine, space)["garden"]["texts"] == _texts(GARDEN[-2:])
    finally:
        client.delete(f"/v1/spaces/{space}")


def test_deleting_a_memory_removes_its_text_from_its_sessions_document(engine, client, garden):
    r = client.delete(f"/v1/spaces/{garden}/memories/chat%230")  # "#" url-encoded
    assert r.status_code == 200, r.text
    assert r.json()["deleted"]["memories"] == 1
    docs = _documents(engine, garden)
    assert docs["chat"]["texts"] == _texts(CHAT[1:])
    assert docs["garden"]["texts"] == _texts(GARDEN)


def test_the_migration_data_step_rebuilds_missing_documents(engine, garden):
    before = _documents(engine, garden)
    rows = statements(engine.store).write("schema/clear_session_documents", space=garden)
    assert rows[0]["cleared"] == 2
    assert all(d["texts"] == [] and d["tag"] is None for d in _documents(engine, garden).values())
    schema_data.build_session_documents(engine.store)
    assert _documents(engine, garden) == before


def _explained(
    recaller: Recaller, space: str, request: RecallRequest, preset: RecallPreset | None = None
) -> dict[str, dict]:
    return {h.id: h.explain for h in recaller.recall(space, request, preset=preset).results}


def test_full_recall_lifts_the_turns_of_the_best_ranked_session(engine, garden):
    # the lift's formula at its configured weight (two sessions would scale it down by their
    # session resolution, which tests/unit/test_recall_step_sessions.py covers)
    unscaled = {"fusion": {"session_lift_by_resolution": False}}
    recaller = Recaller(engine, merge_overrides(DEFAULT_RECALL_CONFIG, unscaled, "recall"))
    request = RecallRequest(query=QUESTION, k=7, touch=False, explain=True)
    explained = _explained(recaller, garden, request)
    lifted = {i: e["session_document"] for i, e in explained.items()}
    assert {d["session"] for d in lifted.values()} == {"garden", "chat"}
    # the garden session covers "grow", "greenhouse", "tomatoes" and "basil": it ranks first
    assert {d["rank"] for i, d in lifted.items() if i.startswith("garden#")} == {0}
    assert {d["rank"] for i, d in lifted.items() if i.startswith("chat#")} == {1}
    weight = DEFAULT_RECALL_CONFIG.session_documents.weight
    for d in lifted.values():  # min-max normalised, then + weight / (1 + rank)
        assert 0.0 <= d["after"] - weight / (1 + d["rank"]) <= 1.0 + 1e-9
    # off: weight 0, another preset, or a recall bounded in time (as_of)
    off = Recaller(
        engine,
        merge_overrides(DEFAULT_RECALL_CONFIG, {"session_documents": {"weight": 0}}, "recall"),
    )
    bounded = RecallRequest(
        query=QUESTION, k=7, touch=False, explain=True,
        filters=RecallFilters(time_to=T0 + timedelta(days=30)),
    )  # fmt: skip
    one_session = RecallRequest(
        query=QUESTION, k=7, touch=False, explain=True, filters=RecallFilters(sessions=["garden"])
    )
    stages = {h.stage_id for h in recaller.recall(garden, request).results if h.stage_id}
    staged = RecallRequest(
        query=QUESTION, k=7, touch=False, explain=True, filters=RecallFilters(stages=sorted(stages))
    )
    two_sessions = RecallRequest(
        query=QUESTION, k=7, touch=False, explain=True,
        filters=RecallFilters(sessions=["garden", "chat"]),
    )  # fmt: skip
    assert all("session_document" in e for e in _explained(recaller, garden, two_sessions).values())
    assert all(
        "session_document" not in e
        for e in _explained(recaller, garden, request, FUSED_RERANK).values()
    )
    for rec, req in (
        (off, request), (recaller, bounded), (recaller, one_session), (recaller, staged),
    ):  # fmt: skip
        assert all("session_document" not in e for e in _explained(rec, garden, req).values())


def test_the_session_search_never_crosses_spaces(engine, client, garden):
    """Another space has sessions with the same ids whose documents match the question
    strongly; this space has none that match: no candidate here gets a session lift."""
    other = f"sd-{uuid.uuid4().hex[:8]}"
    assert client.post("/v1/spaces", json={"id": other}).status_code == 201
    try:
        plain = [("Cy", "user", "We talked about the weather and the train timetable.")]
        Ingestor(engine).ingest_sessions(other, [_session("garden", plain, 0)])
        explained = _explained(
            Recaller(engine), other, RecallRequest(query=QUESTION, k=3, touch=False, explain=True)
        )
        assert explained  # the vector signal still finds the only memory
        assert all("session_document" not in e or e["session_document"]["rank"] is None
                   for e in explained.values())  # fmt: skip
        rows = engine.store.read(
            "recall/session_ranking",
            space=other,
            fulltext=f"+space_tag:{space_ops.fulltext_tag(other)}^0 +texts:(greenhouse OR basil)",
            session_k=10,
        )
        assert rows == []
        rows = engine.store.read(
            "recall/session_ranking",
            space=garden,
            fulltext=f"+space_tag:{space_ops.fulltext_tag(garden)}^0 +texts:(greenhouse OR basil)",
            session_k=10,
        )
        assert [r["session_id"] for r in rows] == ["garden", "chat"]
    finally:
        client.delete(f"/v1/spaces/{other}")


def test_sessions_tied_in_bm25_rank_by_id_not_by_insertion_order(engine, client):
    """Lucene breaks score ties by insertion order; the ranking breaks them by id, also at the
    cut (what keeps a space rebuilt by import, whose sessions arrive in another order, ranking
    the same): of two sessions with identical documents, ``session_k=1`` keeps the smaller id
    whichever was written first."""
    same = [("Ann", "user", "The greenhouse roof leaks when it rains.")]
    for first, second in (("s-b", "s-a"), ("s-a", "s-b")):
        space = f"sd-{uuid.uuid4().hex[:8]}"
        assert client.post("/v1/spaces", json={"id": space}).status_code == 201
        try:
            for sid in (first, second):
                Ingestor(engine).ingest_sessions(space, [_session(sid, same, 0)])
            rows = engine.store.read(
                "recall/session_ranking",
                space=space,
                fulltext=f"+space_tag:{space_ops.fulltext_tag(space)}^0 +texts:(greenhouse)",
                session_k=1,
            )
            assert [r["session_id"] for r in rows] == ["s-a"], (first, second)
        finally:
            client.delete(f"/v1/spaces/{space}")
