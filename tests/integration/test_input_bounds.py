"""Inputs at and beyond the documented bounds are a 422 naming the field, never a 500."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

HUGE = 2**63  # one past Neo4j's largest integer


@pytest.mark.parametrize(
    "path",
    [
        "/v1/spaces",
        "/v1/spaces/{space}/stages",
        "/v1/spaces/{space}/supersessions",
        "/v1/spaces/{space}/entities",
        "/v1/spaces/{space}/facts",
        "/v1/spaces/{space}/jobs",
        "/v1/spaces/{space}/merges",
    ],
)
def test_a_skip_beyond_the_bound_is_a_422_naming_skip(
    client: TestClient, space: str, path: str
) -> None:
    url = path.format(space=space)
    r = client.get(url, params={"skip": HUGE})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == "skip"
    assert client.get(url, params={"skip": 1_000_000}).status_code == 200


def test_a_lone_surrogate_in_content_is_a_422(client: TestClient, space: str) -> None:
    body = '{"memories": [{"content": "broken \\ud800 text"}]}'
    r = client.post(
        f"/v1/spaces/{space}/memories", content=body, headers={"content-type": "application/json"}
    )
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"].startswith("memories.0.content"), r.text


def test_control_and_bidi_characters_are_stored_verbatim_and_neutralised_in_prompts(
    client: TestClient, space: str
) -> None:
    hostile = "The vault code is 4417 \x1b[2J\x1b[31m\x07 \u202eevil\u202c \u2066x\u2069 \x9b\x00"
    body = {"memories": [{"id": "h1", "content": hostile, "speaker": "Eve\u202e"}]}
    assert client.post(f"/v1/spaces/{space}/memories", json=body).status_code == 201
    stored = client.get(f"/v1/spaces/{space}/memories/h1").json()
    assert stored["memory"]["text"] == hostile  # stored text stays verbatim
    ask = {"query": "what is the vault code?", "context_window": 2000}
    r = client.post(f"/v1/spaces/{space}/context", json=ask)
    assert r.status_code == 200, r.text
    prompt = r.json()["prompt"]
    assert "4417" in prompt
    for char in "\x1b\x07\x9b\x00\u202e\u202c\u2066\u2069":
        assert char not in prompt, repr(char)
    assert "&#x1b;[2J&#x1b;[31m&#x7;" in prompt and "&#x202e;evil&#x202c;" in prompt
    assert "Eve&#x202e;" in prompt
