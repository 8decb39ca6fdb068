"""The entity graph, entity and stage vectors, standing instructions and preferences, and the
request limits of the write path, over HTTP against a real Neo4j."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from fastapi.testclient import TestClient

from tests.cypher import statements


def turns(*texts: str, role: str = "user") -> list[dict[str, str]]:
    return [{"role": role, "content": t, "speaker": "user"} for t in texts]


def post(client, space, session_id, items, day="2024-03-01"):
    r = client.post(
        f"/v1/spaces/{space}/sessions",
        json={"session_id": session_id, "started_at": f"{day}T10:00:00Z", "turns": items},
    )
    assert r.status_code == 201, r.text
    return r.json()


def state(engine, space):
    return statements(engine.store).read("ingest/graph_state", space=space)[0]


def test_identifiers_are_kept_when_they_recur(client, engine, space):
    post(client, space, "s1", turns("My `fetchWeatherData` helper breaks on `cityName` input."))
    s = state(engine, space)
    assert s["entities"] == []  # one sighting: candidates only
    assert {c["key"] for c in s["candidates"]} == {"fetchweatherdata", "cityname"}
    # a case/punctuation variant of the same identifier is the second sighting
    body = post(client, space, "s2", turns("Now fetch_weather_data() times out."), day="2024-03-02")
    s = state(engine, space)
    assert [e["key"] for e in s["entities"]] == ["fetchweatherdata"]
    entity = client.get(f"/v1/spaces/{space}/entities/fetchweatherdata").json()
    # promotion links the first memory too
    assert {m["id"] for m in entity["mentions"]} == {"s1#0", "s2#0"}
    assert entity["entity"]["mention_count"] == 2 and s["entities"][0]["memories"] == 2
    assert {c["key"] for c in s["candidates"]} == {"cityname"}
    assert body["items"][0]["entities"] == ["fetch_weather_data"]
    # erasing the first sighting's memory takes its candidates with it
    r = client.delete(f"/v1/spaces/{space}/memories/s1%230")  # "#" escaped in the path
    assert r.status_code == 200, r.text
    assert state(engine, space)["candidates"] == []


def test_cooccurrence_is_capped_per_memory(client, engine, space):
    names = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy"]
    text = " and ".join(names) + " met in Paris, London, Berlin and Madrid."
    post(client, space, "s1", turns(text))
    s = state(engine, space)
    assert len(s["entities"]) >= 10
    assert len(s["edges"]) <= 15  # the 6 most salient entities pair: at most 15 edges
    post(client, space, "s2", turns(text), day="2024-03-02")
    again = state(engine, space)
    assert len(again["edges"]) <= 15 + 15
    assert sum(e["weight"] for e in again["edges"]) <= 30


def test_entity_and_stage_vectors(client, engine, space):
    """Off by default (nothing reads them yet); kept as running means when switched on."""
    from pipelines.ingest.config import IngestConfig
    from pipelines.ingest.service import Ingestor, SessionIn, TurnIn

    post(client, space, "s0", turns("Caroline visited Boston.", "Boston was cold."), "2024-02-01")
    s = state(engine, space)
    assert s["entities"] and s["stages"]
    assert not any(x["vector"] for x in s["entities"] + s["stages"])
    on = Ingestor(engine, IngestConfig(entity_vectors=True, stage_vectors=True))
    texts = ("Caroline moved to Boston.", "Caroline loves Boston in May.")
    on.ingest_session(
        space,
        SessionIn("s1", [TurnIn(role="user", content=t, speaker="user") for t in texts]),
    )
    s = state(engine, space)
    boston = next(e for e in s["entities"] if e["key"] == "boston")
    assert boston["vector"] and boston["n"] == 2
    staged = [st for st in s["stages"] if st["vector"]]
    assert staged and all(st["n"] == 2 for st in staged)
    assert client.delete(f"/v1/spaces/{space}/memories/s1%231").status_code == 200
    s = state(engine, space)
    boston = next(e for e in s["entities"] if e["key"] == "boston")
    assert boston["n"] == 1 and all(st["n"] == 1 for st in s["stages"] if st["vector"])
    # with one memory left, the vectors are that memory's embedding: its share was taken out
    (row,) = engine.store.read("recall/embeddings", space=space, ids=["s1#0"])
    memory_vec = np.asarray(row["embedding"], dtype=np.float32)
    assert np.allclose(np.asarray(boston["embedding"]), memory_vec, atol=1e-5)
    staged = [st for st in s["stages"] if st["vector"]]
    assert np.allclose(np.asarray(staged[0]["embedding"]), memory_vec, atol=1e-5)


def test_standing_preferences_are_listed_and_superseded(client, engine, space):
    post(client, space, "s1", turns("I prefer SQLite for now.", "Always include type hints."))
    post(
        client,
        space,
        "s2",
        turns("I prefer PostgreSQL now.", "Always include docstrings.")
        + turns("I prefer MySQL.", role="assistant"),
        day="2024-03-05",
    )
    prefs = client.get(f"/v1/spaces/{space}/facts", params={"category": "preference"}).json()
    # the assistant's "I prefer MySQL" is at most an ordinary fact about the assistant: it is
    # no standing preference of the user and supersedes nothing
    users = [f for f in prefs["facts"] if f["role"] == "user"]
    assert [f["text"] for f in users] == ["I prefer PostgreSQL now"]
    assert users[0]["source_id"] == "s2#0"
    assert all(f["role"] == "assistant" for f in prefs["facts"] if f["source_id"] == "s2#2")
    history = client.get(
        f"/v1/spaces/{space}/facts",
        params={"category": "preference", "include_superseded": True},
    ).json()["facts"]
    assert [(f["text"], f["status"]) for f in history if f["role"] == "user"] == [
        ("I prefer SQLite for now", "superseded"),
        ("I prefer PostgreSQL now", "active"),
    ]
    instructions = client.get(
        f"/v1/spaces/{space}/facts", params={"category": "instruction"}
    ).json()["facts"]
    # two different standing rules stand side by side
    assert sorted(f["text"] for f in instructions) == [
        "Always include docstrings",
        "Always include type hints",
    ]
    sups = client.get(f"/v1/spaces/{space}/supersessions").json()
    edges = sups.get("supersessions", sups)
    assert any(e.get("rule") == "standing-update" for e in edges)


def test_an_identical_statement_supersedes_nothing(client, engine, space):
    post(client, space, "s1", turns("Never use semicolons in JavaScript."))
    # the same rule again (case and punctuation aside), in a later session and in one batch
    post(
        client,
        space,
        "s2",
        turns("never use semicolons in JavaScript!", "Never use semicolons in JavaScript."),
        day="2024-03-05",
    )
    history = client.get(
        f"/v1/spaces/{space}/facts",
        params={"category": "instruction", "include_superseded": True},
    ).json()["facts"]
    assert len(history) == 3
    assert {f["status"] for f in history} == {"active"}
    sups = client.get(f"/v1/spaces/{space}/supersessions").json()
    assert not [e for e in sups.get("supersessions", sups) if e.get("rule") == "standing-update"]


def test_request_body_limit_is_413(engine):
    from app.main import create_app
    from app.settings import Settings

    small = create_app(
        Settings(neo4j_uri=engine.store.config.uri, max_request_bytes=2048), engine=engine
    )
    with TestClient(small) as c:
        space = f"t-{uuid.uuid4().hex[:8]}"
        assert c.post("/v1/spaces", json={"id": space}).status_code == 201
        try:
            big = {"memories": [{"content": "x" * 4000}]}
            r = c.post(f"/v1/spaces/{space}/memories", json=big)
            assert r.status_code == 413 and r.json()["error"]["code"] == "payload_too_large"
            assert c.get(f"/v1/spaces/{space}").json()["counts"]["memories"] == 0
            ok = c.post(f"/v1/spaces/{space}/memories", json={"memories": [{"content": "hi"}]})
            assert ok.status_code == 201
        finally:
            c.delete(f"/v1/spaces/{space}")


def test_request_content_limit_is_422(client, space):
    r = client.post(
        f"/v1/spaces/{space}/memories",
        json={"memories": [{"content": c * 4_000_000} for c in "yz"] + [{"content": "w"}]},
    )
    assert r.status_code == 422 and r.json()["error"]["field"] == "memories"


def test_limits_are_documented_in_openapi(client):
    spec = client.get("/openapi.json").json()
    for path in ("/v1/spaces/{space}/sessions", "/v1/spaces/{space}/memories"):
        responses = spec["paths"][path]["post"]["responses"]
        assert "413" in responses and "422" in responses
        assert "4,000,000" in responses["422"]["description"]


@pytest.mark.parametrize("category", ["instruction", "preference"])
def test_fact_categories_are_accepted(client, space, category):
    r = client.get(f"/v1/spaces/{space}/facts", params={"category": category})
    assert r.status_code == 200 and r.json()["facts"] == []
