"""The OpenAPI document names every error status an operation can answer, in the one error
shape, the bearer scheme (only when API keys are configured), and the request limits."""

from __future__ import annotations

from typing import Any

from app.main import create_app
from app.schemas.memories import MAX_CHARS
from app.settings import Settings

ERROR = {"$ref": "#/components/schemas/ErrorResponse"}


def _document(**settings: Any) -> dict[str, Any]:
    return create_app(Settings(**settings)).openapi()


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, ops in doc["paths"].items()
        for method, op in ops.items()
        if method in {"get", "post", "put", "patch", "delete"}
    ]


def test_every_v1_operation_documents_its_errors_in_the_one_shape_and_the_bearer_scheme() -> None:
    doc = _document(api_keys="k;reader@read")
    assert doc["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert "HTTPValidationError" not in doc["components"]["schemas"]
    v1 = [(p, m, op) for p, m, op in _operations(doc) if p.startswith("/v1/")]
    assert len(v1) > 25
    for path, method, op in v1:
        responses = op["responses"]
        expected = {"401", "403", "422", "503"} | ({"404"} if "{" in path else set())
        expected |= {"400"} if "requestBody" in op else set()
        assert expected <= set(responses), (method, path, sorted(responses))
        for status in expected:
            schema = responses[status]["content"]["application/json"]["schema"]
            assert schema == ERROR, (method, path, status)
        assert "Retry-After" in responses["503"]["headers"]
        assert op["security"] == [{"bearerAuth": []}]
    writes = {(p, m) for p, m, op in v1 if "409" in op["responses"]}
    assert ("delete", "/v1/spaces/{space}") in {(m, p) for p, m in writes}
    assert ("/v1/spaces/{space}/recall", "post") not in writes  # a read, in a POST


def test_readyz_documents_its_503_and_needs_a_key_only_when_configured() -> None:
    open_doc = _document()["paths"]["/readyz"]["get"]
    assert "503" in open_doc["responses"] and "security" not in open_doc
    keyed = _document(api_keys="k", health_requires_key=True)["paths"]["/readyz"]["get"]
    assert {"401", "503"} <= set(keyed["responses"]) and keyed["security"]


def test_the_limits_are_in_the_schema() -> None:
    schemas = _document()["components"]["schemas"]
    assert schemas["SessionCreate"]["properties"]["turns"]["maxItems"] == 1000
    assert schemas["MemoriesCreate"]["properties"]["memories"]["maxItems"] == 1000
    assert schemas["TurnIn"]["properties"]["content"]["maxLength"] == MAX_CHARS
    assert schemas["MemoryCreate"]["properties"]["content"]["maxLength"] == MAX_CHARS
    window = schemas["ContextRequest"]["properties"]["context_window"]
    assert (window["minimum"], window["maximum"]) == (256, 2_000_000)
    assert schemas["ContextRequest"]["properties"]["query"]["maxLength"] > 0


def test_without_keys_no_operation_declares_bearer_security() -> None:
    """No keys configured: no call needs one, so the document names no scheme, no operation
    asks for it and none can answer 401 or 403."""
    doc = _document()
    assert "securitySchemes" not in doc.get("components", {})
    v1 = [(p, m, op) for p, m, op in _operations(doc) if p.startswith("/v1/")]
    assert len(v1) > 25
    for path, method, op in _operations(doc):
        assert "security" not in op, (method, path)
        assert not {"401", "403"} & set(op["responses"]), (method, path)
    for path, method, op in v1:
        assert {"422", "503"} <= set(op["responses"]), (method, path)
