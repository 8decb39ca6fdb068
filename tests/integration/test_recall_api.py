"""Issue 4: recall over HTTP and through the service, against a real Neo4j.

One small conversation (two sessions, two speakers, two stages) plus two tagged notes is
ingested once per module into its own spaces; every test reads it (tests that write restore
what they changed).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import numpy as np
import pytest

import cypher
from benchmarks.presets import BENCH_PRESETS, FULLTEXT, FUSED, FUSED_RERANK
from pipelines import schema_data
from pipelines import spaces as space_ops
from pipelines.errors import InvalidInput, NotFound
from pipelines.ingest.service import Ingestor, MemoryIn, SessionIn, TurnIn
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG, RecallConfig
from pipelines.recall.presets import PRESETS
from pipelines.recall.service import Recaller, RecallFilters, RecallRequest, open_recaller
from tests.cypher import statements

S1_START = datetime(2023, 3, 10, 9, 0, tzinfo=UTC)
S2_START = datetime(2023, 6, 20, 18, 30, tzinfo=UTC)

S1 = [  # (speaker, role, content)
    ("Alice", "user", "Hi Bob! Last weekend I finally adopted a golden retriever puppy, "
     "her name is Biscuit."),
    ("Bob", "assistant", "Congratulations! How is she settling in at your flat?"),
    ("Alice", "user", "She chews everything, especially my running shoes, but she is sweet."),
    ("Bob", "assistant", "I started cello lessons in January; my teacher says my bowing is "
     "getting better."),
    ("Alice", "user", "My sister Carol works as a marine biologist in Lisbon, studying how "
     "octopuses solve puzzles."),
]  # fmt: skip
S2 = [
    ("Bob", "assistant", "We are planning a hiking trip to the Dolomites in August with my "
     "brother."),
    ("Alice", "user", "Big news: I switched jobs, I now work as a data engineer at Zentrix "
     "building streaming pipelines with Kafka."),
    ("Bob", "assistant", "My favourite dish to cook on weekends is mushroom risotto with "
     "parmesan."),
    ("Alice", "user", "For the record, the quarterly budget line uses the code XQ-7734-ALPHA."),
    ("Bob", "assistant", "Good to know, I will put it in my planning spreadsheet."),
]  # fmt: skip


def _sessions(prefix: str) -> list[SessionIn]:
    def turns(rows):
        return [TurnIn(role=r, content=c, speaker=s) for s, r, c in rows]

    return [
        SessionIn(f"{prefix}s1", turns(S1), started_at=S1_START, stage="spring"),
        SessionIn(f"{prefix}s2", turns(S2), started_at=S2_START, stage="summer"),
    ]


NOTES = [
    MemoryIn(
        content="Alice is allergic to penicillin.",
        id="note-allergy",
        tags=["health"],
        time=datetime(2023, 4, 1, tzinfo=UTC),
    ),
    MemoryIn(
        content="Bob prefers answers in bullet points.",
        id="note-format",
        tags=["preferences"],
        time=datetime(2023, 4, 2, tzinfo=UTC),
    ),
]


@pytest.fixture(scope="module")
def conv(client, engine):
    """Space A holds the conversation (ids a-s1#0 ...) and the notes; space B holds the same
    conversation under other session ids (b-s1#0 ...)."""
    ingestor = Ingestor(engine)
    a, b = f"ra-{uuid.uuid4().hex[:8]}", f"rb-{uuid.uuid4().hex[:8]}"
    for sid in (a, b):
        assert client.post("/v1/spaces", json={"id": sid}).status_code == 201
    ingestor.ingest_sessions(a, _sessions("a-"))
    ingestor.add_memories(a, NOTES)
    ingestor.ingest_sessions(b, _sessions("b-"))
    yield {"a": a, "b": b}
    for sid in (a, b):
        client.delete(f"/v1/spaces/{sid}")


@pytest.fixture(scope="module")
def recaller(engine):
    recaller, close = open_recaller(engine)
    yield recaller
    close()


def recall(client, space, query, **body):
    r = client.post(f"/v1/spaces/{space}/recall", json={"query": query, "touch": False, **body})
    assert r.status_code == 200, r.text
    return r.json()


def ids(body):
    return [h["id"] for h in body["results"]]


def bench_ids(recaller, space, query, preset, **request):
    """The ids an ablation preset (benchmark only, not offered by the API) returns."""
    req = RecallRequest(query=query, touch=False, **request)
    return [h.id for h in recaller.recall(space, req, preset=preset).results]


def config(**sections) -> RecallConfig:
    """The default recall configuration with some fields of its sections changed."""
    return merge_overrides(DEFAULT_RECALL_CONFIG, sections, "recall")


# ----------------------------------------------------------------------------- relevance


def test_paraphrase_ranks_the_relevant_memory_first(client, conv):
    body = recall(client, conv["a"], "Which musical instrument is Bob learning to play?")
    assert ids(body)[0] == "a-s1#3"
    body = recall(client, conv["a"], "What kind of dog did Alice get?")
    assert ids(body)[0] == "a-s1#0"
    assert body["abstain"] is False
    assert body["complete"] is True
    assert body["candidates"] >= len(body["results"]) > 0


def test_every_preset_answers(client, conv, recaller):
    for preset in PRESETS:
        body = recall(client, conv["a"], "Where does Alice work now?", preset=preset, k=3)
        assert "a-s2#1" in ids(body), preset
    for name, preset in BENCH_PRESETS.items():
        assert "a-s2#1" in bench_ids(recaller, conv["a"], "Where does Alice work now?", preset), (
            name
        )


def test_the_api_refuses_the_benchmark_ablations(client, conv):
    for name in ("fulltext", "fused", "fused_rerank", "full_no_late"):
        r = client.post(f"/v1/spaces/{conv['a']}/recall", json={"query": "dog", "preset": name})
        assert r.status_code == 422, (name, r.text)
        assert r.json()["error"]["field"] == "preset"
    preset = FULLTEXT.model_dump(mode="json")  # nor a preset given as data
    r = client.post(f"/v1/spaces/{conv['a']}/recall", json={"query": "dog", "preset": preset})
    assert r.status_code == 422 and r.json()["error"]["field"] == "preset"


def test_fulltext_only_finds_a_rare_keyword(conv, recaller):
    assert bench_ids(recaller, conv["a"], "XQ-7734-ALPHA", FULLTEXT, k=3)[0] == "a-s2#3"
    assert bench_ids(recaller, conv["a"], "Zentrix", FULLTEXT, k=3) == ["a-s2#1"]


@pytest.mark.parametrize(
    "query",
    [
        'AND OR "unbalanced ( ] ~ \\ /',
        "cello AND (",
        "title:cello* OR ~ ^2 {x TO y]",
        "NOT",
        '"',
        "\\",
        "&& || ! + -",
        "?*",
    ],
)
def test_lucene_syntax_never_breaks_fulltext(client, conv, recaller, query):
    r = client.post(f"/v1/spaces/{conv['a']}/recall", json={"query": query, "touch": False})
    assert r.status_code == 200, (query, r.text)
    bench_ids(recaller, conv["a"], query, FULLTEXT)


def test_lucene_operators_are_searched_as_words(conv, recaller):
    assert bench_ids(recaller, conv["a"], "cello AND (", FULLTEXT, k=3)[0] == "a-s1#3"


# ----------------------------------------------------------------------------- filters


def test_time_range_filter(client, conv):
    body = recall(
        client,
        conv["a"],
        "What did they talk about?",
        k=20,
        filters={"time_from": "2023-06-01T00:00:00Z", "time_to": "2023-12-31T00:00:00Z"},
    )
    assert ids(body) and all(i.startswith("a-s2#") for i in ids(body))
    body = recall(
        client, conv["a"], "hiking trip", k=20, filters={"time_to": "2023-03-31T00:00:00Z"}
    )
    assert ids(body) and all(i.startswith("a-s1#") for i in ids(body))


def test_speaker_role_stage_session_kind_tag_filters(client, conv):
    a = conv["a"]
    body = recall(client, a, "pets and jobs", k=20, filters={"speakers": ["bob"]})
    assert body["results"] and {h["speaker"] for h in body["results"]} == {"Bob"}
    body = recall(client, a, "pets and jobs", k=20, filters={"roles": ["user"]})
    assert body["results"] and {h["role"] for h in body["results"]} == {"user"}
    body = recall(client, a, "pets and jobs", k=20, filters={"stages": ["summer"]})
    assert body["results"] and all(i.startswith("a-s2#") for i in ids(body))
    body = recall(client, a, "pets and jobs", k=20, filters={"sessions": ["a-s1"]})
    assert body["results"] and all(i.startswith("a-s1#") for i in ids(body))
    body = recall(client, a, "allergy medicine", k=20, filters={"kinds": ["note"]})
    assert set(ids(body)) == {"note-allergy", "note-format"}
    body = recall(client, a, "allergy medicine", k=20, filters={"tags": ["health"]})
    assert ids(body) == ["note-allergy"]


def test_filters_combine_and_can_exclude_everything(client, conv):
    body = recall(client, conv["a"], "cello", filters={"speakers": ["Alice"], "sessions": ["a-s1"]})
    assert {h["speaker"] for h in body["results"]} <= {"Alice"}
    assert "a-s1#3" not in ids(body)
    body = recall(client, conv["a"], "cello", filters={"speakers": ["nobody"]})
    assert body["results"] == [] and body["abstain"] is True
    assert body["abstain_reason"] == "no_candidates"


def test_include_superseded(client, conv, engine):
    a = conv["a"]
    statements(engine.store).write("recall/set_status", space=a, id="a-s1#3", status="superseded")
    try:
        assert "a-s1#3" not in ids(recall(client, a, "cello lessons", k=20))
        body = recall(client, a, "cello lessons", include_superseded=True)
        assert ids(body)[0] == "a-s1#3"
        statements(engine.store).write("recall/set_status", space=a, id="a-s1#3", status="merged")
        assert "a-s1#3" not in ids(recall(client, a, "cello lessons", include_superseded=True))
    finally:
        statements(engine.store).write("recall/set_status", space=a, id="a-s1#3", status="active")


# ----------------------------------------------------------------------------- heat


def _state(engine, space, mid):
    return statements(engine.store).read("recall/memory_state", space=space, ids=[mid])[0]


def test_touch_false_has_no_side_effects_and_touch_true_counts_an_access(client, conv, engine):
    a, mid = conv["a"], "a-s1#4"
    statements(engine.store).write("recall/set_heat", space=a, id=mid, heat=0.5)
    before = _state(engine, a, mid)
    body = recall(client, a, "marine biologist sister octopus", k=1)
    assert ids(body) == [mid]
    assert _state(engine, a, mid) == before
    r = client.post(
        f"/v1/spaces/{a}/recall", json={"query": "marine biologist sister octopus", "k": 1}
    )
    assert r.status_code == 200 and ids(r.json()) == [mid]
    engine.access.flush()  # accesses are written behind the read path
    after = _state(engine, a, mid)
    assert after["access_count"] == (before["access_count"] or 0) + 1
    assert after["last_access"] is not None and before["last_access"] is None
    assert 0.5 < after["heat"] <= 1.0


# ----------------------------------------------------------------------------- the rest


def test_deadline_returns_partial_results(client, conv):
    body = recall(client, conv["a"], "What kind of dog did Alice get?", deadline_ms=1)
    assert body["complete"] is False
    assert body["results"]
    assert "rerank" not in body["timings_ms"] and "select" not in body["timings_ms"]


def test_explain_and_timings(client, conv):
    body = recall(client, conv["a"], "What kind of dog did Alice get?", explain=True)
    top = body["results"][0]
    ex = top["explain"]
    assert ex["signals"]["vector"]["rank"] >= 1
    assert -1.0 <= ex["signals"]["vector"]["score"] <= 1.0
    assert ex["fused"] > 0
    assert ex["rerank"]["method"] in {"context", "cross_encoder"}
    assert "penalty" in ex["selection"]
    assert body["intent"] in {"semantic", "entity", "preference"}
    for stage in ("understand", "embed", "candidates", "fuse", "total"):
        assert body["timings_ms"][stage] >= 0
    plain = recall(client, conv["a"], "What kind of dog did Alice get?")
    assert plain["results"][0]["explain"] is None


def test_abstains_on_something_never_mentioned(client, conv):
    body = recall(client, conv["a"], "Which cryptocurrency exchange does the landlord use?")
    assert body["abstain"] is True
    assert body["abstain_reason"]
    assert body["results"]  # still returns what it found
    assert recall(client, conv["a"], "What is the name of Alice's puppy?")["abstain"] is False


def test_space_isolation(client, conv, recaller):
    # B holds the same conversation as A (under b- ids) but not A's notes.
    for query in ("What kind of dog did Alice get?", "cello", "XQ-7734-ALPHA", "Alice"):
        for preset in PRESETS:
            body = recall(client, conv["b"], query, preset=preset, k=20)
            assert all(i.startswith("b-") for i in ids(body)), (query, preset)
            assert body["candidates"] <= len(S1) + len(S2)
        for name, preset in BENCH_PRESETS.items():
            found = bench_ids(recaller, conv["b"], query, preset, k=20)
            assert all(i.startswith("b-") for i in found), (query, name)
        assert ids(recall(client, conv["b"], query, k=20))
    body = recall(client, conv["b"], "allergic to penicillin", k=20)
    assert "note-allergy" not in ids(body)


def test_speaker_named_in_the_query(client, conv):
    body = recall(client, conv["a"], "What does Bob like to cook?", k=3)
    assert ids(body)[0] == "a-s2#2"
    assert body["results"][0]["speaker"] == "Bob"


def test_event_order_questions_come_back_in_time_order(client, conv):
    body = recall(
        client,
        conv["a"],
        "In what order did Alice adopt a puppy and switch jobs?",
        k=5,
        order="auto",
    )
    assert body["intent"] == "event_order"
    times = [h["time"] for h in body["results"]]
    assert times == sorted(times)


def test_order_forces_rank_or_time_order_without_changing_the_results(client, conv):
    question = "In what order did Alice adopt a puppy and switch jobs?"
    auto = recall(client, conv["a"], question, k=5, order="auto")
    ranked = recall(client, conv["a"], question, k=5)  # rank order: the default
    assert ranked["intent"] == "event_order"
    assert ids(ranked) != ids(auto)  # the question's rank order is not its time order
    # time order: by time, then session and turn (a session's turns share its start time)
    by_time = sorted(
        ranked["results"], key=lambda h: (h["time"], h["session_id"], int(h["id"].split("#")[1]))
    )
    assert [h["id"] for h in by_time] == ids(auto)
    semantic = recall(client, conv["a"], "golden retriever", k=5, order="auto")
    assert ids(semantic) == ids(recall(client, conv["a"], "golden retriever", k=5))
    timed = recall(client, conv["a"], "golden retriever", k=5, order="time")
    assert sorted(ids(timed)) == sorted(ids(semantic))
    times = [h["time"] for h in timed["results"]]
    assert times == sorted(times)
    bad = client.post(f"/v1/spaces/{conv['a']}/recall", json={"query": "x", "order": "newest"})
    assert bad.status_code == 422 and "order" in bad.text


def test_service_interface_with_embeddings(conv, recaller):
    resp = recaller.recall(
        conv["a"],
        RecallRequest(
            query="golden retriever",
            k=3,
            touch=False,
            filters=RecallFilters(exclude_ids=["a-s1#0"]),
        ),
        with_embeddings=True,
    )
    assert resp.results and "a-s1#0" not in [h.id for h in resp.results]
    for hit in resp.results:
        assert isinstance(hit.embedding, np.ndarray) and hit.embedding.shape == (384,)
        assert hit.time is not None and hit.time.tzinfo is not None
    plain = recaller.recall(conv["a"], RecallRequest(query="golden retriever", touch=False))
    assert all(h.embedding is None for h in plain.results)


def test_time_expression_boosts_the_window(recaller, conv):
    now = datetime(2023, 7, 1, tzinfo=UTC)
    resp = recaller.recall(
        conv["a"],
        RecallRequest(query="What did Bob say in March?", touch=False, now=now, explain=True),
    )
    assert resp.results[0].id.startswith("a-s1#")
    assert resp.results[0].explain["boosts"].get("time")


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "   \n\t "}, "query"),
        ({"query": "x" * 2001}, "query"),
        ({"query": "dog", "k": 0}, "k"),
        ({"query": "dog", "k": 101}, "k"),
        ({"query": "dog", "filters": {"bogus": 1}}, "filters.bogus"),
        ({"query": "dog", "filter": {}}, "filter"),
        ({"query": "dog", "preset": "magic"}, "preset"),
        ({"query": "dog", "preset": "fused"}, "preset"),
        ({"query": "dog", "order": "newest"}, "order"),
        ({"query": "dog", "deadline_ms": 0}, "deadline_ms"),
        ({"query": "dog", "session_novelty": 1.5}, "session_novelty"),
        ({"query": "dog", "session_novelty": -0.1}, "session_novelty"),
    ],
)
def test_bad_input_is_422_naming_the_field(client, conv, body, field):
    r = client.post(f"/v1/spaces/{conv['a']}/recall", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == field


def test_missing_query_is_422(client, conv):
    r = client.post(f"/v1/spaces/{conv['a']}/recall", json={"k": 3})
    assert r.status_code == 422
    assert r.json()["error"]["code"] == "invalid_input"
    assert r.json()["error"]["message"].endswith("Field required")


def test_inverted_time_range_is_422(client, conv):
    r = client.post(
        f"/v1/spaces/{conv['a']}/recall",
        json={
            "query": "dog",
            "filters": {"time_from": "2023-07-01T00:00:00Z", "time_to": "2023-01-01T00:00:00Z"},
        },
    )
    assert r.status_code == 422 and r.json()["error"]["field"] == "filters.time_from"


def test_unknown_space_is_404(client):
    r = client.post("/v1/spaces/no-such-space-xyz/recall", json={"query": "dog"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_a_big_space_cannot_starve_a_small_one_in_fulltext(engine, conv):
    """The full-text index is global; the query is restricted to its space inside Lucene,
    so another space with many more matches cannot crowd this one out of the top-N (here
    the over-fetch cap is far below the big space's matches)."""
    big = f"big-{uuid.uuid4().hex[:8]}"
    space_ops.create(engine.store, space_ops.NewSpace(id=big))
    try:
        Ingestor(engine).add_memories(
            big,
            [
                MemoryIn(content=f"Cello practice log entry {i}: scales and bowing.")
                for i in range(60)
            ],
        )
        tight = Recaller(engine, config(candidates={"fulltext_overfetch_max": 10}))
        assert bench_ids(tight, conv["a"], "cello", FULLTEXT, k=3)[:1] == ["a-s1#3"]
        resp = tight.recall(big, RecallRequest(query="cello", k=20, touch=False), preset=FULLTEXT)
        assert 0 < len(resp.results) <= 10
        assert all(r.content.startswith("Cello practice") for r in resp.results)
        # Without the restriction, the global top 10 holds only the big space's memories.
        top = statements(engine.store).read(
            "recall/fulltext_global", lucene="text:(cello)", limit=10
        )
        assert {r["space"] for r in top} == {big}
    finally:
        space_ops.delete(engine.store, big)


def test_memories_carry_their_fulltext_space_tag_and_the_data_step_restores_it(engine, conv):
    rows = statements(engine.store).write("schema/clear_space_tags", space=conv["b"])
    assert rows[0]["cleared"] == len(S1) + len(S2)
    schema_data.tag_memories(engine.store)
    tags = statements(engine.store).read("schema/space_tags", space=conv["b"])
    assert tags == [{"tag": space_ops.fulltext_tag(conv["b"]), "n": len(S1) + len(S2)}]
    tags = statements(engine.store).read("schema/space_tags", space=conv["a"])
    assert tags == [{"tag": space_ops.fulltext_tag(conv["a"]), "n": len(S1) + len(S2) + len(NOTES)}]


# ----------------------------------------------------------------------------- query plans


def _spy_candidates(engine, monkeypatch, *, vector_only: bool = True) -> list[dict]:
    """Record the parameters of every ``recall/candidates`` call (the call still runs); by
    default only the calls with vector signals (with ``concurrent_signals`` the signals that
    need no embedding are a separate call)."""
    seen: list[dict] = []
    read = engine.store.read

    def spy(statement, /, **params):
        if statement == "recall/candidates" and (params["embeddings"] or not vector_only):
            seen.append(params)
        return read(statement, **params)

    monkeypatch.setattr(engine.store, "read", spy)
    return seen


def test_a_small_stage_of_a_big_space_is_scanned_exactly(engine, conv, monkeypatch):
    """Above the exact-scan threshold the space uses the global vector index, post-filtered;
    a stage filter small enough to scan is scanned exactly instead (through the (space,
    stage_id) index), with the exact scan's ranking and no over-fetch retries."""
    seen = _spy_candidates(engine, monkeypatch)
    exact_everywhere = Recaller(engine)  # 12 memories: below 8,000, the whole space is exact
    small = Recaller(engine, config(candidates={"exact_scan_threshold": 5}))
    request = RecallRequest(
        query="outdoor plans and food", k=5, touch=False, preset="dense",
        filters=RecallFilters(stages=["summer"]),
    )  # fmt: skip
    want = exact_everywhere.recall(conv["a"], request)
    assert seen[-1]["exact"] is True and seen[-1]["exact_stages"] is None
    seen.clear()
    got = small.recall(conv["a"], request)
    assert len(seen) == 1  # one round trip: no adaptive over-fetch
    assert seen[0]["exact"] is False and "summer" in seen[0]["exact_stages"]
    assert [r.id for r in got.results] == [r.id for r in want.results]
    assert len(got.results) == len(S2) and all(r.id.startswith("a-s2#") for r in got.results)
    # A stage larger than the threshold goes to the global index (and is still filtered).
    seen.clear()
    tiny = Recaller(engine, config(candidates={"exact_scan_threshold": 4}))
    body = tiny.recall(conv["a"], request)
    assert seen[0]["exact"] is False and seen[0]["exact_stages"] is None
    assert body.results and all(r.id.startswith("a-s2#") for r in body.results)


@pytest.mark.parametrize("name", ["full", "fused", "fulltext", "dense"])
def test_concurrent_signals_change_nothing_but_the_round_trips(
    engine, conv, monkeypatch, recaller, name
):
    """The embedding-free signals go to Neo4j while the query is embedded, the vector signals
    after: the same results and scores as one combined round trip (without an executor, or
    with ``concurrent_signals`` off)."""
    preset = BENCH_PRESETS[name]
    seen = _spy_candidates(engine, monkeypatch, vector_only=False)
    threads = recaller.executor
    off = Recaller(engine, config(candidates={"concurrent_signals": False}), executor=threads)
    alone = Recaller(engine)  # no executor: every round trip in the calling thread
    two = recaller
    assert two.config.candidates.concurrent_signals  # the default
    for query in ["What did Alice adopt?", "Bob's cello lessons in June", "golden retriever"]:
        request = RecallRequest(query=query, k=8, touch=False, explain=True)
        seen.clear()
        want = off.recall(conv["a"], request, preset=preset)
        assert len(seen) == 1
        seen.clear()
        same = alone.recall(conv["a"], request, preset=preset)
        assert len(seen) == 1
        seen.clear()
        got = two.recall(conv["a"], request, preset=preset)
        for other in (same, got):
            assert [(r.id, r.score) for r in other.results] == [
                (r.id, r.score) for r in want.results
            ]
            assert [r.explain for r in other.results] == [r.explain for r in want.results]
            assert other.abstain == want.abstain and other.candidates == want.candidates
        if name in ("fulltext", "dense"):  # one half has nothing to ask: one round trip
            assert len(seen) == 1
            continue
        lexical = [p for p in seen if not p["embeddings"]]
        vector = [p for p in seen if p["embeddings"]]
        assert len(lexical) == 1 and len(vector) == 1
        assert vector[0]["fulltext"] is None and vector[0]["entity_keys"] == []
        assert lexical[0]["windows"] == [] and lexical[0]["exact_stages"] is None


def test_a_stage_filter_size_is_read_once_per_ttl(engine, conv, monkeypatch):
    """The exact-scan choice for a stage filter (a count of its memories) is cached like the
    space profile: a second recall with the same stages does not count them again."""
    reads: list[str] = []
    read = engine.store.read

    def spy(statement, /, **params):
        reads.append(statement)
        return read(statement, **params)

    monkeypatch.setattr(engine.store, "read", spy)
    recaller = Recaller(engine, config(candidates={"exact_scan_threshold": 5}))
    request = RecallRequest(
        query="outdoor plans", k=3, touch=False, filters=RecallFilters(stages=["summer"])
    )
    first = recaller.recall(conv["a"], request)
    second = recaller.recall(conv["a"], request)
    assert reads.count("recall/stage_scope_size") == 1
    assert [r.id for r in first.results] == [r.id for r in second.results]
    uncached = Recaller(
        engine, config(candidates={"exact_scan_threshold": 5}, space_profile_ttl_s=0.0)
    )
    uncached.recall(conv["a"], request)
    uncached.recall(conv["a"], request)
    assert reads.count("recall/stage_scope_size") == 3


def test_a_query_embeds_as_a_batch_does(engine):
    """Short batches (queries) skip SentenceTransformer.encode's machinery; the vectors are
    the same as the batched path's, unit length, in order."""
    emb = engine.embedder
    texts = ["Where does Carol work?", "cello lessons", "a much longer sentence " * 20]
    direct = emb.encode(texts)
    assert len(texts) <= emb.direct_max
    batched = np.asarray(
        emb._model.encode(texts, normalize_embeddings=True, convert_to_numpy=True),
        dtype=np.float32,
    )
    assert direct.shape == (3, emb.dimensions) and direct.dtype == np.float32
    assert np.allclose(direct, batched, atol=1e-5)
    assert np.allclose(np.linalg.norm(direct, axis=1), 1.0, atol=1e-5)
    many = [f"note number {i}" for i in range(emb.direct_max + 1)]
    assert np.allclose(emb.encode(many)[:3], emb.encode(many[:3]), atol=1e-5)


def test_vector_text_is_what_recall_embeds_first(engine, conv, monkeypatch):
    """The assembler embeds ``vector_text`` ahead of its recall; it must be the very text
    recall embeds first (speakers named in the query stripped), or the memo would miss."""
    recaller = Recaller(engine)
    query = "What does Alice do   at Zentrix?"
    text = recaller.vector_text(conv["a"], query)
    assert "Alice" not in text and "Zentrix" in text
    seen: list[list[str]] = []
    encode = engine.embedder.encode
    encode_with_tokens = engine.embedder.encode_with_tokens

    def spy(texts):
        seen.append(list(texts))
        return encode(texts)

    def spy_tokens(texts):  # presets with late interaction embed with token vectors
        seen.append(list(texts))
        return encode_with_tokens(texts)

    monkeypatch.setattr(engine.embedder, "encode", spy)
    monkeypatch.setattr(engine.embedder, "encode_with_tokens", spy_tokens)
    recaller.recall(conv["a"], RecallRequest(query=query, k=3, touch=False))
    assert seen and seen[0][0] == text
    seen.clear()
    recaller.recall(conv["a"], RecallRequest(query=query, k=3, touch=False), preset=FUSED_RERANK)
    assert seen and seen[0][0] == recaller.vector_text(conv["a"], query, FUSED_RERANK)
    with pytest.raises(InvalidInput):
        recaller.vector_text(conv["a"], "   ")


def test_recall_in_an_unknown_space_is_not_found_and_caches_no_profile(engine):
    """An unknown space is NotFound, and no (empty) profile is cached for when the space is
    created; an empty space's profile is never cached either."""
    recaller = Recaller(engine)
    ghost = f"ghost-{uuid.uuid4().hex[:8]}"
    with pytest.raises(NotFound):
        recaller.recall(ghost, RecallRequest(query="anything about puppies", k=3, touch=False))
    assert ghost not in recaller._profiles


def _operators(plan) -> list[tuple[str, str]]:
    out = [(plan["operatorType"].split("@")[0], plan["args"].get("Details", ""))]
    for child in plan.get("children", []):
        out.extend(_operators(child))
    return out


@pytest.mark.parametrize(
    ("statement", "params"),
    [
        (
            "recall/candidates",
            dict(
                statuses=["active"], time_from=None, time_to=None, roles=None, speakers=None,
                kinds=None, stages=None, sessions=None, tags=None, exclude_ids=[],
                embeddings=[], exact=False, exact_stages=None, vector_k=10, vector_fetch=10,
                fulltext=None, fulltext_k=10, fulltext_fetch=10, entity_keys=["cello"],
                entity_k=10, windows=[], window_k=10, context_k=0,
            ),
        ),
        (
            "assemble/ppr_memories",
            dict(
                entities=[{"key": "cello", "mass": 1.0}], exclude_stage=None, exclude_ids=[],
                include_superseded=False, limit=10, per_entity=10,
            ),
        ),
        (
            "assemble/ppr_memories_as_of",
            dict(
                entities=[{"key": "cello", "mass": 1.0}], exclude_stage=None, exclude_ids=[],
                include_superseded=False, as_of=datetime(2100, 1, 1, tzinfo=UTC), known_at=None,
                limit=10, per_entity=10,
            ),
        ),
    ],
)  # fmt: skip
def test_entity_expansions_start_from_the_entity(engine, conv, statement, params):
    """Entity -> memory expansions must walk the entity's MENTIONS edges. Given a labelled
    memory and its space, the planner preferred to seek every memory of the space and probe
    each for an edge into the entity (Expand(Into)): 5.8 s instead of 0.1 s at 100,000
    memories (BENCHMARKS.md). The statements leave the memory unlabelled so that plan is
    impossible; this keeps it so."""
    text = "EXPLAIN " + cypher.load(statement)
    with engine.store.session() as session:
        plan = session.run(text, space=conv["a"], **params).consume().plan
    ops = _operators(plan)
    mentions = [(op, d) for op, d in ops if "MENTIONS" in d]
    assert mentions and all(op == "Expand(All)" for op, _ in mentions), mentions


# ----------------------------------------------------------------------------- question prior


def test_question_turns_are_scaled_down_in_full_only(client, engine, recaller):
    """A conversation turn that ends with a question scores ``question_turn_factor`` times
    its fused score (preset ``full``, said in ``explain``); its answer, a note that asks
    something, and every other preset are left alone."""
    space = f"rq-{uuid.uuid4().hex[:8]}"
    assert client.post("/v1/spaces", json={"id": space}).status_code == 201
    try:
        ingestor = Ingestor(engine)
        ingestor.ingest_sessions(space, _sessions("q-"))
        ingestor.add_memories(
            space, [MemoryIn(content="Should we move Biscuit's vet visit to Friday?", id="n-q")]
        )
        question = "How is Biscuit the puppy settling in at the flat?"
        factor = DEFAULT_RECALL_CONFIG.fusion.question_turn_factor
        assert 0.0 < factor < 1.0
        request = RecallRequest(query=question, k=12, touch=False, explain=True)
        full = recaller.recall(space, request)
        boosts = {h.id: h.explain["boosts"] for h in full.results}
        assert boosts["q-s1#1"].get("question") == factor  # "... How is she settling in ...?"
        assert "question" not in boosts["q-s1#2"]  # the answer
        assert "question" not in boosts["n-q"]  # a note, not a conversation turn
        asking = {i for i, b in boosts.items() if "question" in b}
        assert asking == {"q-s1#1"}  # the only turn of the conversation that ends with "?"
        fused = recaller.recall(space, request, preset=FUSED)
        assert all("question" not in h.explain["boosts"] for h in fused.results)
        neutral = Recaller(engine, config(fusion={"question_turn_factor": 1.0})).recall(
            space, request
        )
        assert all("question" not in h.explain["boosts"] for h in neutral.results)
        rank = {h.id: i for i, h in enumerate(full.results)}
        neutral_rank = {h.id: i for i, h in enumerate(neutral.results)}
        assert rank["q-s1#1"] >= neutral_rank["q-s1#1"]  # never lifted
    finally:
        client.delete(f"/v1/spaces/{space}")
