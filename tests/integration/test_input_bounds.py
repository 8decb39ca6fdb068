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
