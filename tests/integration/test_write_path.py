"""Issue 3: the write path over HTTP against a real Neo4j."""

from __future__ import annotations

import uuid

import pytest

SESSION = {
    "session_id": "s1",
    "started_at": "2023-05-08T13:56:00Z",
    "turns": [
        {
            "id": "D1:1",
            "role": "user",
            "speaker": "Caroline",
            "content": "I went to the LGBTQ support group in Boston yesterday and it was powerful.",
        },
        {
            "id": "D1:2",
            "role": "assistant",
            "speaker": "Melanie",
            "content": "That sounds amazing, Caroline! What happened at the Boston group?",
        },
        {
            "id": "D1:3",
            "role": "user",
            "speaker": "Caroline",
            "content": "We decided to start a reading club. I prefer books by Toni Morrison.",
        },
    ],
}


def post_session(client, space, body=SESSION, **extra):
    return client.post(f"/v1/spaces/{space}/sessions", json={**body, **extra})


def test_session_ingest_builds_the_graph(client, space):
    r = post_session(client, space)
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["memory_ids"] == ["D1:1", "D1:2", "D1:3"]
    assert [i["decision"] for i in body["items"]] == ["stored"] * 3
    assert body["stage_ids"] == ["gap:20230508T135600Z"]
    assert body["counts"]["memories"] == 3

    detail = client.get(f"/v1/spaces/{space}/memories/D1:2").json()
    assert detail["memory"]["text"] == SESSION["turns"][1]["content"]  # verbatim
    assert detail["memory"]["speaker"] == "Melanie" and detail["memory"]["role"] == "assistant"
    assert detail["memory"]["event_time"].startswith("2023-05-08T13:56")
    assert detail["previous"]["id"] == "D1:1" and detail["next"]["id"] == "D1:3"
    assert detail["session"]["id"] == "s1"
    assert detail["stage"]["id"] == "gap:20230508T135600Z"
    # "Caroline" in D1:2 and "Boston" in D1:1/D1:2 are the same entities (canonical keys)
    keys = {e["key"] for e in detail["entities"]}
    assert "boston" in keys

    counts = client.get(f"/v1/spaces/{space}").json()["counts"]
    assert counts["memories"] == 3 and counts["sessions"] == 1 and counts["stages"] == 1
    assert counts["entities"] >= 3 and counts["facts"] >= 2

    boston = client.get(f"/v1/spaces/{space}/entities/boston").json()
    assert [m["id"] for m in boston["mentions"]] == ["D1:1", "D1:2"]
    assert boston["entity"]["mention_count"] == 2
    assert any(o["weight"] >= 1 for o in boston["cooccurring"])


def test_facts_categories_and_decision_crediting(client, space):
    post_session(client, space)
    facts = client.get(f"/v1/spaces/{space}/facts").json()["facts"]
    cats = {(f["category"], f["speaker"]) for f in facts}
    assert ("decision", "Caroline") in cats
    assert ("preference", "Caroline") in cats
    decisions = client.get(f"/v1/spaces/{space}/facts", params={"category": "decision"}).json()
    assert all(f["role"] == "user" for f in decisions["facts"])  # only user turns decide
    assert client.get(f"/v1/spaces/{space}/facts", params={"category": "nope"}).status_code == 422


def test_resend_is_idempotent(client, space):
    first = post_session(client, space).json()
    again = post_session(client, space)
    assert again.status_code == 201
    assert [i["decision"] for i in again.json()["items"]] == ["unchanged"] * 3
    counts = client.get(f"/v1/spaces/{space}").json()["counts"]
    assert counts["memories"] == 3 and counts["sessions"] == 1
    boston = client.get(f"/v1/spaces/{space}/entities/boston").json()
    assert boston["entity"]["mention_count"] == 2  # not double counted
    assert first["counts"]["memories"] == 3


def test_same_id_different_content_conflicts(client, space):
    post_session(client, space)
    changed = {**SESSION, "turns": [dict(SESSION["turns"][0], content="something else")]}
    r = post_session(client, space, changed)
    assert r.status_code == 409 and r.json()["error"]["field"] == "turns.0.id"


def test_entity_canonicalisation_across_memories(client, space):
    r = client.post(
        f"/v1/spaces/{space}/memories",
        json={
            "memories": [
                {"content": "The Eiffel Tower was crowded."},
                {"content": "We visited the Eiffel Tower's gift shop again!"},
                {"content": "Met Jon at Google yesterday.", "tags": ["work"]},
            ]
        },
    )
    assert r.status_code == 201, r.text
    ents = client.get(f"/v1/spaces/{space}/entities", params={"q": "eiffel"}).json()["entities"]
    assert [e["key"] for e in ents] == ["eiffel tower"] and ents[0]["mention_count"] == 2
    names = {e["key"] for e in client.get(f"/v1/spaces/{space}/entities").json()["entities"]}
    assert not names & {"we", "i", "yesterday", "it", "again"}  # no pronouns/stop words


def test_time_gap_and_explicit_stages(client, space):
    def session(sid, when, stage=None):
        body = {
            "session_id": sid,
            "started_at": when,
            "turns": [{"role": "user", "content": f"Session {sid} about gardening."}],
        }
        if stage:
            body["stage"] = stage
        return post_session(client, space, body).json()

    a = session("a", "2024-01-01T10:00:00Z")
    b = session("b", "2024-01-01T12:00:00Z")  # 2 h later: same stage (gap 4 h)
    c = session("c", "2024-01-02T12:00:00Z")  # a day later: new stage
    d = session("d", "2024-01-02T13:00:00Z", stage="Project X")
    assert a["stage_ids"] == b["stage_ids"] != c["stage_ids"]
    assert d["stage_ids"] == ["label:project x"]
    stages = client.get(f"/v1/spaces/{space}/stages").json()["stages"]
    assert [s["ordinal"] for s in stages] == list(range(len(stages)))
    assert {s["id"] for s in stages} == {a["stage_ids"][0], c["stage_ids"][0], "label:project x"}
    detail = client.get(f"/v1/spaces/{space}/stages/{a['stage_ids'][0]}").json()
    assert detail["memory_count"] == 2 and sorted(detail["sessions"]) == ["a", "b"]
    assert detail["next"] == c["stage_ids"][0]


def test_gate_decisions_are_reported_never_silent(client, space):
    base = "Caroline adopted a rescue dog named Biscuit from the Portland shelter in 2022."
    first = client.post(
        f"/v1/spaces/{space}/memories", json={"gate": True, "memories": [{"content": base}]}
    ).json()
    assert first["items"][0]["decision"] == "stored"
    assert set(first["items"][0]["signals"]) >= {"novelty", "salience", "prediction_error"}
    r = client.post(
        f"/v1/spaces/{space}/memories",
        json={"gate": True, "memories": [{"id": "dup", "content": base + "!"}, {"content": "ok"}]},
    ).json()
    merged, trivial = r["items"]
    assert merged["decision"] == "merged" and merged["merge_target"] == first["items"][0]["id"]
    assert "near-duplicate" in merged["reason"]
    assert trivial["decision"] == "rejected" and trivial["reason"]
    assert r["memory_ids"] == []
    forced = client.post(
        f"/v1/spaces/{space}/memories",
        json={"gate": True, "force": True, "memories": [{"content": "ok"}]},
    ).json()
    assert forced["items"][0]["decision"] == "stored" and forced["items"][0]["reason"] == "forced"
    assert client.get(f"/v1/spaces/{space}").json()["counts"]["memories"] == 2
    restated = client.get(f"/v1/spaces/{space}/memories/{first['items'][0]['id']}").json()
    assert restated["memory"]["id"] == first["items"][0]["id"]


def test_space_gate_setting(client):
    sid = f"g-{uuid.uuid4().hex[:8]}"
    client.post("/v1/spaces", json={"id": sid, "settings": {"gate": {"enabled": True}}})
    try:
        r = client.post(f"/v1/spaces/{sid}/memories", json={"memories": [{"content": "ok"}]})
        assert r.json()["items"][0]["decision"] == "rejected"  # the space's gate is on
        r = client.post(
            f"/v1/spaces/{sid}/memories", json={"gate": False, "memories": [{"content": "ok"}]}
        )
        assert r.json()["items"][0]["decision"] == "stored"  # the request overrides it
    finally:
        client.delete(f"/v1/spaces/{sid}")


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"turns": [{"role": "user", "content": "   "}]}, "turns.0.content"),
        ({"turns": [{"role": "user", "content": "x" * 4_000_001}]}, "turns.0.content"),
        ({"turns": [{"role": "robot", "content": "hi"}]}, "turns.0.role"),
        ({"turns": [{"role": "user", "content": "hi", "time": "yesterday-ish"}]}, "turns.0.time"),
        ({"started_at": "2023-13-45"}, "started_at"),
        ({"turns": []}, "turns"),
        ({"session_id": ""}, "session_id"),
        ({"turns": [{"role": "user", "content": "hi", "mood": "happy"}]}, "turns.0.mood"),
    ],
)
def test_bad_input_names_the_field(client, space, patch, field):
    body = {"session_id": "bad", "turns": [{"role": "user", "content": "hi"}], **patch}
    r = client.post(f"/v1/spaces/{space}/sessions", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == field
    assert client.get(f"/v1/spaces/{space}").json()["counts"]["memories"] == 0


def test_unknown_space_is_404(client):
    r = post_session(client, "no-such-space")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    assert client.get("/v1/spaces/no-such-space/entities").status_code == 404


def test_batch_is_all_or_nothing(client, space, monkeypatch):
    """A failure inside the transaction (after memories and entities were written) leaves
    nothing behind; so does a failure of the analysis that runs beside the memory writes."""
    from pipelines.ingest import analyse
    from pipelines.ingest.writer import Writer

    real = Writer._facts

    def failing(*args, **kwargs):
        raise RuntimeError("injected failure in the middle of the transaction")

    monkeypatch.setattr(Writer, "_facts", failing)
    with pytest.raises(RuntimeError, match="injected"):
        post_session(client, space)
    counts = client.get(f"/v1/spaces/{space}").json()["counts"]
    assert counts == {
        **counts,
        "memories": 0,
        "sessions": 0,
        "entities": 0,
        "stages": 0,
        "facts": 0,
    }
    monkeypatch.setattr(Writer, "_facts", real)

    def analysis_fails(*args, **kwargs):
        raise RuntimeError("injected failure in the analysis worker")

    monkeypatch.setattr(analyse, "extract_facts", analysis_fails)
    with pytest.raises(RuntimeError, match="analysis worker"):
        post_session(client, space)
    assert client.get(f"/v1/spaces/{space}").json()["counts"]["memories"] == 0
    monkeypatch.undo()
    assert post_session(client, space).status_code == 201  # and a retry then succeeds
    # an id twice in one request with other content: a conflict before anything is written
    dup = {"memories": [{"id": "x", "content": "a"}, {"id": "x", "content": "b"}]}
    r = client.post(f"/v1/spaces/{space}/memories", json=dup)
    assert r.status_code == 409 and r.json()["error"]["field"] == "memories.1.id"


def test_delete_memory_repairs_the_graph(client, space):
    post_session(client, space)
    r = client.delete(f"/v1/spaces/{space}/memories/D1:2")
    assert r.status_code == 200 and r.json()["deleted"]["memories"] == 1
    assert client.get(f"/v1/spaces/{space}/memories/D1:2").status_code == 404
    first = client.get(f"/v1/spaces/{space}/memories/D1:1").json()
    assert first["next"]["id"] == "D1:3"  # chain re-linked
    boston = client.get(f"/v1/spaces/{space}/entities/boston").json()
    assert boston["entity"]["mention_count"] == 1
    assert client.delete(f"/v1/spaces/{space}/memories/D1:2").status_code == 404


def test_space_isolation(client):
    """Same ids and content in two spaces: no endpoint reads or touches the other space."""
    a, b = f"iso-a-{uuid.uuid4().hex[:6]}", f"iso-b-{uuid.uuid4().hex[:6]}"
    for sid in (a, b):
        assert client.post("/v1/spaces", json={"id": sid}).status_code == 201
    try:
        post_session(client, a)
        post_session(client, b)
        client.delete(f"/v1/spaces/{b}/memories/D1:1")
        assert client.get(f"/v1/spaces/{a}/memories/D1:1").status_code == 200
        assert client.get(f"/v1/spaces/{b}/memories/D1:1").status_code == 404
        ea = client.get(f"/v1/spaces/{a}/entities/boston").json()
        eb = client.get(f"/v1/spaces/{b}/entities/boston").json()
        assert ea["entity"]["mention_count"] == 2 and eb["entity"]["mention_count"] == 1
        assert {m["id"] for m in eb["mentions"]} == {"D1:2"}
        assert all(c["weight"] >= 1 for c in ea["cooccurring"])
        facts_a = client.get(f"/v1/spaces/{a}/facts").json()["facts"]
        facts_b = client.get(f"/v1/spaces/{b}/facts").json()["facts"]
        assert {f["source_id"] for f in facts_b} <= {"D1:2", "D1:3"}
        assert len(facts_a) >= len(facts_b)
        deleted = client.delete(f"/v1/spaces/{b}").json()["deleted"]
        assert deleted["memories"] == 2
        after = client.get(f"/v1/spaces/{a}").json()["counts"]
        assert after["memories"] == 3 and after["sessions"] == 1
    finally:
        client.delete(f"/v1/spaces/{a}")
        client.delete(f"/v1/spaces/{b}")
