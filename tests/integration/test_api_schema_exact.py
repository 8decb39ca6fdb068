"""The OpenAPI document says exactly what the server enforces (schemathesis's ST202 / ST201
cases of the fuzz run, one by one): a request the schema allows is accepted, one it refuses
is a 422 naming the field, and nothing an import accepts breaks a later read."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from fastapi.testclient import TestClient


@pytest.fixture(scope="module")
def document(client: TestClient) -> dict[str, Any]:
    return dict(client.get("/openapi.json").json())


def _validator(document: dict[str, Any], component: str) -> jsonschema.Draft202012Validator:
    """A validator of one component with the document's other components resolvable."""
    schema = {"$ref": f"#/components/schemas/{component}", "components": document["components"]}
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def _records_validator(document: dict[str, Any]) -> jsonschema.Draft202012Validator:
    return _validator(document, "ImportBatch")


# --- settings: the schema names every section, key and bound; the rest is relaxed -----------


def test_unknown_settings_are_refused_by_the_schema_and_the_server(
    client: TestClient, document: dict[str, Any]
) -> None:
    body = {"settings": {"__main__": 1}}
    assert not _validator(document, "NewSpace").is_valid(body)
    r = client.post("/v1/spaces", json=body)
    assert r.status_code == 422 and r.json()["error"]["field"] == "settings"


@pytest.mark.parametrize(
    "settings",
    [
        {"gate": {"compression_level": 5.0}},  # JSON Schema's integer includes 5.0
        {"gate": {"novelty_weight": 0, "salience_weight": 0, "prediction_error_weight": 0}},
        {"assembly": {"split": [3, 1, 0]}},  # shares, read as fractions of their sum
        {"consolidation": {"runner": {"renew_every_seconds": 50}}},  # capped at half the ttl
        {"consolidation": {"upkeep": {"projection_max_idle_seconds": 1}}},  # at least the grace
        {"consolidation": {"decay": {"consolidated": {"heat_floor": 0.2}}}},  # a partial rule
        {"gate": {"category_offsets": {"decision": -0.1}}},
    ],
)
def test_settings_the_schema_allows_are_accepted(
    client: TestClient, document: dict[str, Any], space: str, settings: dict[str, Any]
) -> None:
    assert _validator(document, "NewSpace").is_valid({"settings": settings})
    r = client.patch(f"/v1/spaces/{space}", json={"settings": settings})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"assembly": {"split": [0, 0, 0]}}, "settings.assembly.split"),
        ({"gate": {"novelty_context_chars": 2**60}}, "settings.gate.novelty_context_chars"),
        ({"consolidation": {"scheduler": {"intervals_seconds": [["nope", 1]]}}}, None),
    ],
)
def test_settings_the_schema_refuses_are_a_422(
    client: TestClient,
    document: dict[str, Any],
    space: str,
    settings: dict[str, Any],
    field: str | None,
) -> None:
    assert not _validator(document, "NewSpace").is_valid({"settings": settings})
    r = client.patch(f"/v1/spaces/{space}", json={"settings": settings})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"].startswith(field or "settings.consolidation.scheduler")


def test_patch_settings_may_be_null_at_any_depth(client: TestClient, space: str) -> None:
    r = client.patch(f"/v1/spaces/{space}", json={"settings": {"gate": {"threshold": 0.5}}})
    assert r.status_code == 200 and r.json()["settings"] == {"gate": {"threshold": 0.5}}
    r = client.patch(f"/v1/spaces/{space}", json={"settings": {"gate": {"threshold": None}}})
    assert r.status_code == 200 and r.json()["settings"] == {"gate": {}}


# --- /context split and query, /recall query ----------------------------------------------


def test_a_context_split_is_three_shares_of_any_scale(client: TestClient, space: str) -> None:
    body = {
        "query": "what moved?",
        "context_window": 2000,
        "split": [5549934991013886.0, 5.114157509877036e-60, 2.5807699288978816e16],
    }
    r = client.post(f"/v1/spaces/{space}/context", json=body)
    assert r.status_code == 200, r.text
    assert sum(r.json()["report"]["budget"]["split"]) == pytest.approx(1.0)
    for bad in ([0, 0, 0], [1, -1, 1], [1, 1]):
        r = client.post(f"/v1/spaces/{space}/context", json={**body, "split": bad})
        assert r.status_code == 422 and r.json()["error"]["field"] == "split", r.text


def test_a_recall_query_of_control_characters_finds_nothing(client: TestClient, space: str) -> None:
    r = client.post(f"/v1/spaces/{space}/recall", json={"query": "\t\u0017"})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["results"] == [] and out["abstain"] and out["abstain_reason"] == "empty_query"
    r = client.post(f"/v1/spaces/{space}/context", json={"query": "\u0017", "context_window": 500})
    assert r.status_code == 200, r.text
    for blank in (" \t", ""):
        r = client.post(f"/v1/spaces/{space}/recall", json={"query": blank})
        assert r.status_code == 422 and r.json()["error"]["field"] == "query"


def test_a_recall_query_is_bounded_as_sent_not_as_cleaned(client: TestClient, space: str) -> None:
    query = "\u0011_\U0009043b\u007f\u00bc" + "*" * 1996  # 2,001 characters, 1,999 once cleaned
    r = client.post(f"/v1/spaces/{space}/recall", json={"query": query})
    assert r.status_code == 422 and r.json()["error"]["field"] == "query", r.text
    assert client.post(f"/v1/spaces/{space}/recall", json={"query": query[1:]}).status_code == 200


# --- import: typed properties, a missing end is a conflict, reads stay readable ------------


def test_import_checks_every_record_and_its_properties(
    client: TestClient, document: dict[str, Any], space: str
) -> None:
    url = f"/v1/spaces/{space}/import"
    cases = [
        ({"type": "counts", "props": [None, None]}, "records.0.props"),
        ({"type": "node", "label": "Merge", "key": "m1"}, "records.0.props.canonical"),
        (
            {"type": "node", "label": "Merge", "key": "m1",
             "props": {"canonical": 3, "duplicates": [], "status": "applied"}},
            "records.0.props.canonical",
        ),
        (
            {"type": "node", "label": "Memory", "key": "x", "props": {"event_time": "today"}},
            "records.0.props.event_time",
        ),
        (
            {"type": "node", "label": "Memory", "key": "x",
             "props": {"odd": {"$datetime": "0000-00-00T00:00:00Z"}}},
            "records.0.props.odd",
        ),
        (
            {"type": "node", "label": "Memory", "key": "x", "props": {"mixed": [1, "a"]}},
            "records.0.props.mixed",
        ),
        ({"type": "space", "props": {"settings": {"__main__": 1}}}, "records.0.props.settings"),
    ]  # fmt: skip
    for record, field in cases:
        if field != "records.0.props.odd":  # a format: jsonschema here checks none of them
            assert not _records_validator(document).is_valid({"records": [record]}), record
        r = client.post(url, json={"records": [record]})
        assert r.status_code == 422, (record, r.text)
        assert r.json()["error"]["field"] == field, (record, r.text)
    assert client.get(f"/v1/spaces/{space}/export/counts").json()["nodes"] == {}


def test_an_edge_to_an_absent_node_is_a_conflict_and_an_absent_space_a_404(
    client: TestClient, document: dict[str, Any], space: str
) -> None:
    edge = {"type": "rel", "from_label": "Chunk", "rel": "CHUNK_OF", "to_label": "Memory",
            "from": "0", "to": "0"}  # fmt: skip
    assert _records_validator(document).is_valid({"records": [edge]})
    r = client.post(f"/v1/spaces/{space}/import", json={"records": [edge]})
    assert r.status_code == 409 and r.json()["error"]["field"] == "records", r.text
    r = client.post(f"/v1/spaces/{space}-absent/import", json={"records": [edge]})
    assert r.status_code == 404 and r.json()["error"]["field"] == "space", r.text


def test_an_imported_merge_reads_back_and_undoes(
    client: TestClient, document: dict[str, Any], space: str
) -> None:
    merge = {"type": "node", "label": "Merge", "key": "0",
             "props": {"canonical": "a", "duplicates": ["b"], "status": "applied",
                       "canonical_before": {"heat": 1.0}}}  # fmt: skip
    assert _records_validator(document).is_valid({"records": [merge]})
    assert client.post(f"/v1/spaces/{space}/import", json={"records": [merge]}).status_code == 200
    listed = client.get(f"/v1/spaces/{space}/merges")
    assert listed.status_code == 200 and [m["id"] for m in listed.json()["merges"]] == ["0"]
    got = client.get(f"/v1/spaces/{space}/merges/0")
    assert got.status_code == 200 and got.json()["similarities"] == []
    # its canonical memory is not in the space: a conflict, not a 422 over stored data
    assert client.post(f"/v1/spaces/{space}/merges/0/undo").status_code == 409


def test_vectors_of_another_length_are_dropped_and_rebuilt(client: TestClient, space: str) -> None:
    memory = {"type": "node", "label": "Memory", "key": "v1",
              "props": {"text": "Lisbon in spring", "status": "active", "role": "user",
                        "kind": "turn", "embedding": [0.5, 0.5],
                        "token_vectors": {"$bytes": "AAAA"},
                        "token_format": "maxsim-v1-128"}}  # fmt: skip
    assert client.post(f"/v1/spaces/{space}/import", json={"records": [memory]}).status_code == 200
    r = client.post(f"/v1/spaces/{space}/recall", json={"query": "Lisbon", "touch": False})
    assert r.status_code == 200, r.text
    assert [h["id"] for h in r.json()["results"]][:1] == ["v1"]
