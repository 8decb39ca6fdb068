"""The HTTP surface agrees with its OpenAPI document: methods a path allows, ids bounded like
the bodies that create them, malformed JSON named as the body, and an existing space is a 200."""

from __future__ import annotations

import uuid

from pipelines.fields import NOT_BLANK_PATTERN


def test_a_405_lists_every_method_of_the_path(client, space) -> None:
    r = client.options(f"/v1/spaces/{space}/memories/m1")
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"
    assert r.headers["allow"] == "DELETE, GET"
    r = client.put(f"/v1/spaces/{space}")
    assert r.headers["allow"] == "DELETE, GET, PATCH"


def test_an_overlong_path_id_is_a_422_naming_it(client, space) -> None:
    r = client.get(f"/v1/spaces/{space}/memories/{'x' * 5000}")
    assert r.status_code == 422 and r.json()["error"]["field"] == "memory_id"
    assert "x" * 300 not in r.text  # the id is not echoed back
    r = client.get(f"/v1/spaces/{'s' * 5000}")
    assert r.status_code == 422 and r.json()["error"]["field"] == "space"
    r = client.get(f"/v1/spaces/{space}/entities/{'k' * 501}")
    assert r.status_code == 422 and r.json()["error"]["field"] == "key"


def test_malformed_json_names_the_body(client, space) -> None:
    r = client.post(
        f"/v1/spaces/{space}/recall",
        content=b'{"query": "abc", "k": 3,,}',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["field"] == "body" and "not valid JSON at character 24" in error["message"]
    r = client.post(f"/v1/spaces/{space}/memories", json=0)
    assert r.status_code == 422 and r.json()["error"]["field"] == "body"


def test_an_integral_float_is_an_integer(client, space) -> None:
    r = client.post(f"/v1/spaces/{space}/recall", json={"query": "dog", "k": 3.0})
    assert r.status_code == 200, r.text


def test_an_existing_space_is_a_200(client) -> None:
    sid = f"again-{uuid.uuid4().hex[:8]}"
    try:
        assert client.post("/v1/spaces", json={"id": sid}).status_code == 201
        again = client.post("/v1/spaces", json={"id": sid})
        assert again.status_code == 200 and again.json()["created"] is False
    finally:
        client.delete(f"/v1/spaces/{sid}")


def test_the_schema_states_the_servers_rules(app) -> None:
    """Rules the server enforces are in the document, so a schema-valid request is accepted."""
    doc = app.openapi()
    schemas = doc["components"]["schemas"]
    turn = schemas["TurnIn"]["properties"]["content"]
    assert (turn["minLength"], turn["pattern"]) == (1, NOT_BLANK_PATTERN)
    condenser = str(schemas["TemplateSlot"]["properties"]["condenser"])
    assert "user_message" in condenser and "enum" in condenser
    assert len(schemas["SupersedeRequest"]["oneOf"]) == 2
    records = schemas["ImportBatch"]["properties"]["records"]["items"]["oneOf"]
    assert {"type", "label", "key"} <= set(records[3]["required"])
    responses = doc["paths"]["/v1/spaces"]["post"]["responses"]
    assert {"200", "201"} <= set(responses)


def test_an_import_record_whose_props_are_not_an_object_is_a_422(client, space) -> None:
    record = {"type": "rel", "from_label": "Stage", "rel": "NEXT_STAGE", "to_label": "Stage"}
    body = {"records": [{**record, "from": "0", "to": "0", "props": [None, None]}]}
    r = client.post(f"/v1/spaces/{space}/import", json=body)
    assert r.status_code == 422 and r.json()["error"]["field"] == "records.0.props"


def test_an_import_record_with_a_non_string_label_is_a_422(client, space) -> None:
    node = {"type": "node", "label": {}, "key": "k"}
    rel = {"type": "rel", "from_label": "Stage", "rel": "NEXT_STAGE", "to_label": [], "from": "a"}
    for record, field in ((node, "records.0.label"), ({**rel, "to": "b"}, "records.0")):
        r = client.post(f"/v1/spaces/{space}/import", json={"records": [record]})
        assert r.status_code == 422 and r.json()["error"]["field"] == field, r.text
