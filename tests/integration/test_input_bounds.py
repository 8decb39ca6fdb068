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


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/jobs/decay", {"dry_run": 0}, "dry_run"),
        ("/jobs/decay", {"dry_run": "true"}, "dry_run"),
        ("/memories", {"memories": [{"content": "x"}], "force": 1}, "force"),
        ("/memories", {"memories": [{"content": "x"}], "gate": "yes"}, "gate"),
        ("/recall", {"query": "x", "k": "5"}, "k"),
        ("/recall", {"query": "x", "k": 5.5}, "k"),  # 5.0 is the integer 5 (JSON Schema)
        ("/recall", {"query": "x", "touch": 0}, "touch"),
        ("/recall", {"query": "x", "deadline_ms": 10**9}, "deadline_ms"),
        ("/recall", {"query": "x", "oversample": -1}, "oversample"),
        ("/context", {"query": "x", "context_window": "4000"}, "context_window"),
        ("/context", {"query": "x", "context_window": 4000, "explain": "no"}, "explain"),
        ("/context", {"query": "x", "context_window": 4000, "headroom": "0.5"}, "headroom"),
        (
            "/context",
            {"query": "x", "context_window": 4000, "template": [{"key": "sys", "content": "s",
                                                                  "priority": 10**12}]},
            "template.0.priority",
        ),
    ],
)  # fmt: skip
def test_loose_types_and_out_of_range_integers_are_a_422_naming_the_field(
    client: TestClient, space: str, path: str, body: dict[str, object], field: str
) -> None:
    r = client.post(f"/v1/spaces/{space}{path}", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == field, r.text


def test_an_empty_space_id_is_a_422_not_a_random_space(client: TestClient) -> None:
    before = client.get("/v1/spaces", params={"limit": 1000}).json()["spaces"]
    r = client.post("/v1/spaces", json={"id": ""})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == "id"
    assert client.get("/v1/spaces", params={"limit": 1000}).json()["spaces"] == before


def test_readyz_names_no_local_path(client: TestClient) -> None:
    r = client.get("/readyz")
    assert r.status_code == 200, r.text
    text = r.text
    for root in ("/root/", "/home/", "/tmp/", "/work/", "/usr/", "site-packages"):
        assert root not in text, (root, text)
    assert r.json()["models"]  # the models are still reported, by name


def test_docs_load_their_assets_from_the_server_not_a_cdn(client: TestClient) -> None:
    for page, asset in (("/docs", "swagger-ui-bundle.js"), ("/redoc", "redoc.standalone.js")):
        html = client.get(page).text
        assert "cdn." not in html and "https://" not in html, html
        src = next(part.split('"')[1] for part in html.split() if asset in part)
        assert client.get(src).status_code == 200, src
