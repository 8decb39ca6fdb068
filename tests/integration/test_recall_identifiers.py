"""Issue 55 item 3: an exact identifier finds its memory first, through the HTTP API.

Sixty look-alike incident notes, stored one request each, differ only in their reference code
("… (ref: SCALEMARK000007)"). Before the exact lookup, recall put the wrong note first for
about half the codes: the full-text hit was one RRF rank among many, and the reranker's blend
with the vector score, late interaction and MMR reordered by meaning, where the notes are the
same. One space is shared by the module's tests."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from benchmarks.identifier_lookup import code, lookups, store

N = 60


@pytest.fixture(scope="module")
def notes(client) -> Iterator[tuple[str, list[str]]]:
    space = f"t-ids-{uuid.uuid4().hex[:8]}"
    assert client.post("/v1/spaces", json={"id": space}).status_code == 201
    try:
        yield space, store(client, space, N)
    finally:
        client.delete(f"/v1/spaces/{space}")


def test_every_code_finds_its_memory_first_and_never_abstains(client, notes) -> None:
    space, ids = notes
    result = lookups(client, space, ids)
    assert result["misses"] == []
    assert (result["first"], result["abstained"]) == (N, 0)


def test_an_exact_hit_is_explained_and_a_longer_code_is_no_match(client, notes) -> None:
    space, ids = notes
    r = client.post(
        f"/v1/spaces/{space}/recall",
        json={"query": f"what happened in {code(42)}?", "k": 5, "explain": True},
    )
    assert r.status_code == 200, r.text
    top = r.json()["results"][0]
    assert top["id"] == ids[42]
    assert top["explain"]["exact_identifier"] == [code(42)]
    # "SCALEMARK0000420" holds "SCALEMARK000042" but is another code: no exact hit, no pin
    r = client.post(
        f"/v1/spaces/{space}/recall", json={"query": "SCALEMARK0000420", "k": 5, "explain": True}
    )
    assert r.status_code == 200, r.text
    assert all("exact_identifier" not in hit["explain"] for hit in r.json()["results"])


def test_paths_and_versions_are_looked_up_exactly(client, space) -> None:
    texts = [
        "The crash was in src/app/main.py when the config was empty.",
        "The crash was in src/app/views.py when the config was empty.",
        "We pinned the client to 4.12.1 after the regression.",
        "We pinned the client to 4.12.0 after the regression.",
    ]
    r = client.post(
        f"/v1/spaces/{space}/memories", json={"memories": [{"content": t} for t in texts]}
    )
    assert r.status_code == 201, r.text
    ids = [item["id"] for item in r.json()["items"]]
    for query, want in (("src/app/views.py", ids[1]), ("which version, 4.12.0?", ids[3])):
        r = client.post(f"/v1/spaces/{space}/recall", json={"query": query, "k": 2})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["results"][0]["id"] == want, (query, body["results"])
        assert body["abstain"] is False
