"""An id given twice in one request: the same memory is stored once (the later item
``unchanged``, as a re-send would be); another memory under the id is a 409 naming the later
item, and nothing of the request is stored."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def _memories(client: TestClient, space: str, *memories: dict[str, Any]) -> Any:
    return client.post(f"/v1/spaces/{space}/memories", json={"memories": list(memories)})


def _count(client: TestClient, space: str) -> int:
    return int(client.get(f"/v1/spaces/{space}").json()["counts"].get("memories", 0))


def test_the_same_memory_twice_is_stored_once(client: TestClient, space: str) -> None:
    note = {"id": "n1", "content": "The deploy key rotates monthly.", "tags": ["ops"]}
    other = {"id": "n2", "content": "Standup is at nine."}
    r = _memories(client, space, note, other, dict(note))
    assert r.status_code == 201, r.text
    items = r.json()["items"]
    assert [i["decision"] for i in items] == ["stored", "stored", "unchanged"]
    assert items[2]["id"] == "n1" and "memories.0" in items[2]["reason"]
    assert _count(client, space) == 2
    # a re-send of the whole request: every item unchanged, nothing more stored
    r = _memories(client, space, note, other, dict(note))
    assert [i["decision"] for i in r.json()["items"]] == ["unchanged"] * 3
    assert _count(client, space) == 2


def test_the_same_content_without_ids_is_one_memory(client: TestClient, space: str) -> None:
    r = _memories(client, space, {"content": "Lisbon in May."}, {"content": "Lisbon in May."})
    assert r.status_code == 201, r.text
    items = r.json()["items"]
    assert [i["decision"] for i in items] == ["stored", "unchanged"]
    assert items[0]["id"] == items[1]["id"] and _count(client, space) == 1


def test_an_id_twice_with_other_content_is_a_conflict(client: TestClient, space: str) -> None:
    r = _memories(
        client,
        space,
        {"id": "a", "content": "first"},
        {"id": "b", "content": "second"},
        {"id": "a", "content": "first, edited"},
    )
    assert r.status_code == 409, r.text
    error = r.json()["error"]
    assert error["code"] == "conflict" and error["field"] == "memories.2.id"
    assert "content" in error["message"]
    assert _count(client, space) == 0


def test_an_id_twice_with_another_field_different_is_a_conflict(
    client: TestClient, space: str
) -> None:
    r = _memories(
        client,
        space,
        {"id": "a", "content": "same", "tags": ["x"]},
        {"id": "a", "content": "same", "tags": ["y"]},
    )
    assert r.status_code == 409, r.text
    error = r.json()["error"]
    assert error["field"] == "memories.1.id" and "tags" in error["message"]
    assert _count(client, space) == 0


def test_a_turn_twice_in_a_session_is_stored_once_and_chained_once(
    client: TestClient, space: str
) -> None:
    hello = {"id": "t0", "role": "user", "speaker": "Ann", "content": "Hello there."}
    reply = {"id": "t1", "role": "assistant", "content": "Hi Ann."}
    body = {"session_id": "s1", "turns": [hello, reply, dict(hello)]}
    r = client.post(f"/v1/spaces/{space}/sessions", json=body)
    assert r.status_code == 201, r.text
    items = r.json()["items"]
    assert [i["decision"] for i in items] == ["stored", "stored", "unchanged"]
    assert "turns.0" in items[2]["reason"]
    assert _count(client, space) == 2
    first = client.get(f"/v1/spaces/{space}/memories/t0").json()
    second = client.get(f"/v1/spaces/{space}/memories/t1").json()
    assert first["previous"] is None and first["next"]["id"] == "t1"
    assert second["next"] is None  # no link back to t0: the chain has no cycle


def test_a_turn_id_twice_with_other_content_is_a_conflict(client: TestClient, space: str) -> None:
    body = {
        "session_id": "s1",
        "turns": [
            {"id": "t0", "role": "user", "content": "Hello there."},
            {"id": "t0", "role": "user", "content": "Hello again."},
        ],
    }
    r = client.post(f"/v1/spaces/{space}/sessions", json=body)
    assert r.status_code == 409, r.text
    assert r.json()["error"]["field"] == "turns.1.id"
    assert _count(client, space) == 0


def test_a_given_id_equal_to_a_derived_one_is_the_same_turn(client: TestClient, space: str) -> None:
    # the second turn's default id is "s1#1", the id the first one gives itself
    turn = {"role": "user", "content": "Same words."}
    body = {"session_id": "s1", "turns": [{"id": "s1#1", **turn}, turn]}
    r = client.post(f"/v1/spaces/{space}/sessions", json=body)
    assert r.status_code == 201, r.text
    assert [i["decision"] for i in r.json()["items"]] == ["stored", "unchanged"]
    assert _count(client, space) == 1
