"""The OpenAPI document says exactly what the server enforces (schemathesis's ST202 / ST201
cases of the fuzz run, one by one): a request the schema allows is accepted, one it refuses
is a 422 naming the field, and nothing an import accepts breaks a later read."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from fastapi.testclient import TestClient

from tests.cypher import statements


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
        (  # beyond Neo4j's +-18:00 offsets: it failed the Bolt message, a 503
            {"type": "node", "label": "EntityCandidate", "key": "x",
             "props": {"seen": {"$datetime": "1114-10-02T03:49:45+19:24"}}},
            "records.0.props.seen",
        ),
        (
            {"type": "node", "label": "Memory", "key": "x",
             "props": {"other": {"$datetime": "2026-01-01T00:00:00-18:01"}}},
            "records.0.props.other",
        ),
        (  # Neo4j's TokenNameError, a 503 before
            {"type": "node", "label": "Memory", "key": "x", "props": {"": 1}},
            "records.0.props.",
        ),
        (
            {"type": "node", "label": "Memory", "key": "x", "props": {"a\u0000b": 1}},
            "records.0.props.a\u0000b",
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


# --- supersessions: an import refuses a malformed edge, reads survive stored junk ----------


def _two_memories(space: str) -> list[dict[str, Any]]:
    return [
        {"type": "node", "label": "Memory", "key": key,
         "props": {"text": f"agent-x uses model {key}", "status": "active", "role": "user",
                   "kind": "turn", "event_time": {"$datetime": "2026-05-01T00:00:00Z"}}}
        for key in ("old", "new")
    ]  # fmt: skip


def _edge(props: Any) -> dict[str, Any]:
    return {"type": "rel", "from_label": "Memory", "rel": "SUPERSEDES", "to_label": "Memory",
            "from": "new", "to": "old", "props": props}  # fmt: skip


def test_an_imported_supersedes_edge_needs_its_id(
    client: TestClient, document: dict[str, Any], space: str
) -> None:
    url = f"/v1/spaces/{space}/import"
    for props, field in (
        (None, "records.2.props.id"),
        ({}, "records.2.props.id"),
        ({"id": 0}, "records.2.props.id"),
        ({"id": "s1", "at": "yesterday"}, "records.2.props.at"),
        ({"id": "s1", "reason": None}, "records.2.props.reason"),
    ):
        body = {"records": [*_two_memories(space), _edge(props)]}
        assert not _records_validator(document).is_valid(body), props
        r = client.post(url, json=body)
        assert r.status_code == 422 and r.json()["error"]["field"] == field, (props, r.text)
    assert client.get(f"/v1/spaces/{space}/export/counts").json()["nodes"] == {}


def test_an_imported_edge_with_only_its_id_reads_back(
    client: TestClient, document: dict[str, Any], space: str
) -> None:
    body = {"records": [*_two_memories(space), _edge({"id": "s1"})]}
    assert _records_validator(document).is_valid(body)
    assert client.post(f"/v1/spaces/{space}/import", json=body).status_code == 200
    r = client.get(f"/v1/spaces/{space}/memories/old/timeline")
    assert r.status_code == 200, r.text
    edges = [e for m in r.json()["chain"] for e in m["supersedes"]]
    assert [(e["id"], e["older"], e["valid_from"]) for e in edges] == [("s1", "old", None)]
    r = client.get(f"/v1/spaces/{space}/supersessions")
    assert r.status_code == 200 and [s["id"] for s in r.json()["supersessions"]] == ["s1"]


def test_reads_leave_out_a_stored_edge_without_an_id(
    client: TestClient, engine: Any, space: str, caplog: pytest.LogCaptureFixture
) -> None:
    body = {"records": _two_memories(space)}
    assert client.post(f"/v1/spaces/{space}/import", json=body).status_code == 200
    # junk only a hand edit stores: no id nor times, a number for a reason
    statements(engine.store).write(
        "consolidate/junk_supersession", space=space, new="new", old="old"
    )
    r = client.get(f"/v1/spaces/{space}/supersessions")
    assert r.status_code == 200 and r.json()["supersessions"] == [], r.text
    assert "malformed in the store" in caplog.text
    r = client.get(f"/v1/spaces/{space}/memories/old/timeline")
    assert r.status_code == 200, r.text
    chain = r.json()["chain"]
    assert sorted(m["id"] for m in chain) == ["new", "old"]
    assert [e for m in chain for e in m["supersedes"]] == []  # a reason of the wrong type


def test_a_null_category_offset_is_in_the_patch_schema_and_removes_it(
    client: TestClient, document: dict[str, Any], space: str
) -> None:
    patch = {"settings": {"gate": {"category_offsets": {"decision": None}}}}
    assert _validator(document, "SpacePatch").is_valid(patch)
    r = client.patch(
        f"/v1/spaces/{space}", json={"settings": {"gate": {"category_offsets": {"decision": -0.1}}}}
    )
    assert r.status_code == 200, r.text
    r = client.patch(f"/v1/spaces/{space}", json=patch)
    assert r.status_code == 200, r.text
    assert r.json()["settings"] == {"gate": {"category_offsets": {}}}


def test_a_null_property_on_an_imported_node_is_a_422(
    client: TestClient, document: dict[str, Any], space: str
) -> None:
    for props, field in (({"ordinal": None}, "ordinal"), ({"x-extra": None}, "x-extra")):
        body = {"records": [{"type": "node", "label": "Stage", "key": "st", "props": props}]}
        assert not _records_validator(document).is_valid(body), props
        r = client.post(f"/v1/spaces/{space}/import", json=body)
        assert r.status_code == 422, r.text
        assert r.json()["error"]["field"] == f"records.0.props.{field}", r.text


# --- blank and ids: one whitespace set, in the document and on the server -------------------

#: Whitespace on which the engines disagree (Python ``\s``: U+001C, U+0085; ECMA-262: U+FEFF).
_SPLIT_WHITESPACE = ("\u001c", "\u0085", "\ufeff", "\u3000 \t")


@pytest.mark.parametrize("blank", _SPLIT_WHITESPACE)
def test_blank_by_any_engine_is_refused_by_the_document_and_the_server(
    client: TestClient, document: dict[str, Any], space: str, blank: str
) -> None:
    memory = _validator(document, "MemoriesCreate")
    assert not memory.is_valid({"memories": [{"content": blank}]})
    r = client.post(f"/v1/spaces/{space}/memories", json={"memories": [{"content": blank}]})
    assert r.status_code == 422 and r.json()["error"]["field"] == "memories.0.content", r.text
    turn = {"session_id": "s", "turns": [{"role": "user", "content": blank}]}
    assert not _validator(document, "SessionCreate").is_valid(turn)
    r = client.post(f"/v1/spaces/{space}/sessions", json=turn)
    assert r.status_code == 422 and r.json()["error"]["field"] == "turns.0.content", r.text
    assert not _validator(document, "RecallRequest").is_valid({"query": blank})
    r = client.post(f"/v1/spaces/{space}/recall", json={"query": blank})
    assert r.status_code == 422 and r.json()["error"]["field"] == "query", r.text
    ctx = {"query": blank, "context_window": 500}
    assert not _validator(document, "ContextRequest").is_valid(ctx)
    r = client.post(f"/v1/spaces/{space}/context", json=ctx)
    assert r.status_code == 422 and r.json()["error"]["field"] == "query", r.text
    # one other character makes it text, on both sides
    text = {"memories": [{"content": blank + "x"}]}
    assert memory.is_valid(text)
    assert client.post(f"/v1/spaces/{space}/memories", json=text).status_code == 201


@pytest.mark.parametrize("edge", _SPLIT_WHITESPACE[:3])
def test_an_id_neither_starts_nor_ends_with_whitespace_on_any_engine(
    client: TestClient, document: dict[str, Any], space: str, edge: str
) -> None:
    memory = _validator(document, "MemoriesCreate")
    for bad in (edge + "id", "id" + edge):
        body = {"memories": [{"id": bad, "content": "text"}]}
        assert not memory.is_valid(body)
        r = client.post(f"/v1/spaces/{space}/memories", json=body)
        assert r.status_code == 422 and r.json()["error"]["field"] == "memories.0.id", r.text
    inner = {"memories": [{"id": f"i{edge}d", "content": "text"}]}
    assert memory.is_valid(inner)
    assert client.post(f"/v1/spaces/{space}/memories", json=inner).status_code == 201


def test_a_write_time_is_an_iso_string_not_a_number(
    client: TestClient, document: dict[str, Any], space: str
) -> None:
    body = {"session_id": "s", "started_at": 0, "turns": [{"role": "user", "content": "hi"}]}
    assert not _validator(document, "SessionCreate").is_valid(body)
    r = client.post(f"/v1/spaces/{space}/sessions", json=body)
    assert r.status_code == 422 and r.json()["error"]["field"] == "started_at", r.text
    note = {"memories": [{"content": "hi", "time": 1700000000}]}
    assert not _validator(document, "MemoriesCreate").is_valid(note)
    r = client.post(f"/v1/spaces/{space}/memories", json=note)
    assert r.status_code == 422 and r.json()["error"]["field"] == "memories.0.time", r.text
