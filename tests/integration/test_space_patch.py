"""PATCH /v1/spaces/{space}: settings changed by a merge patch, checked like a new space's
(a 422 naming the field, nothing changed); settings that no longer validate can be fixed."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from tests.cypher import statements


def test_patch_changes_name_description_and_settings_by_merge(
    client: TestClient, space: str
) -> None:
    url = f"/v1/spaces/{space}"
    r = client.patch(url, json={"settings": {"gate": {"enabled": True, "threshold": 0.3}}})
    assert r.status_code == 200, r.text
    assert r.json()["settings"] == {"gate": {"enabled": True, "threshold": 0.3}}
    r = client.patch(
        url, json={"name": "Renamed", "description": "d", "settings": {"gate": {"enabled": False}}}
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["name"], body["description"]) == ("Renamed", "d")
    assert body["settings"] == {"gate": {"enabled": False, "threshold": 0.3}}  # merged
    r = client.patch(url, json={"settings": {"gate": {"threshold": None}}})
    assert r.json()["settings"] == {"gate": {"enabled": False}}  # null removes a key
    assert client.get(url).json()["settings"] == {"gate": {"enabled": False}}
    assert client.get(url).json()["name"] == "Renamed"  # absent fields are unchanged


def test_a_bad_patch_is_a_422_naming_the_field_and_changes_nothing(
    client: TestClient, space: str
) -> None:
    url = f"/v1/spaces/{space}"
    assert client.patch(url, json={"settings": {"gate": {"enabled": True}}}).status_code == 200
    for patch, field in (
        ({"settings": {"gate": {"enabled": "yes please"}}}, "settings.gate.enabled"),
        ({"settings": {"nonsense": {}}}, "settings"),
        ({"name": ""}, "name"),
        ({"colour": "red"}, "colour"),
    ):
        r = client.patch(url, json=patch)
        assert r.status_code == 422, r.text
        assert r.json()["error"]["field"] == field, r.text
    assert client.get(url).json()["settings"] == {"gate": {"enabled": True}}
    r = client.patch("/v1/spaces/no-such-space-here", json={"name": "x"})
    assert r.status_code == 404 and r.json()["error"]["field"] == "space"


def test_stored_settings_that_no_longer_validate_can_be_fixed(
    client: TestClient, space: str, engine
) -> None:
    broken = {"assembly": {"split": [0, 0, 0]}, "gate": {"enabled": False}}
    statements(engine.store).write(
        "spaces/set_raw_settings", space=space, settings=json.dumps(broken)
    )
    ask = {"query": "anything", "context_window": 2000}
    assert client.post(f"/v1/spaces/{space}/context", json=ask).status_code == 422
    r = client.patch(f"/v1/spaces/{space}", json={"settings": {"assembly": None}})
    assert r.status_code == 200, r.text
    assert r.json()["settings"] == {"gate": {"enabled": False}}
    assert client.post(f"/v1/spaces/{space}/context", json=ask).status_code == 200
