"""The TypeScript SDK's route table matches the server's OpenAPI document (no route
missing, none invented), its idempotency flags follow the shared 503 contract, and its
generated types are what the generator writes from the document now (no drift)."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from tests.sdk_coverage import TS_SDK, openapi, public_routes, typescript_table

#: Writes that the server documents as idempotent (a retry changes nothing): creating a space
#: with an existing id returns it unchanged; a session's turn ids default to session_id#i;
#: an import batch sent again changes nothing.
IDEMPOTENT_WRITES = {
    ("POST", "/v1/spaces"),
    ("POST", "/v1/spaces/{space}/sessions"),
    ("POST", "/v1/spaces/{space}/import"),
    ("POST", "/v1/spaces/{space}/recall"),  # a read, in a POST
    ("POST", "/v1/spaces/{space}/context"),  # a read, in a POST
}


def _generator() -> ModuleType:
    path = TS_SDK / "scripts" / "gen_types.py"
    spec = importlib.util.spec_from_file_location("gen_types", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_route_table_is_every_public_route() -> None:
    table = typescript_table()
    ours = [(method, path) for method, path, _ in table.values()]
    assert len(ours) == len(set(ours)), "a route is in the table twice"
    server = public_routes()
    assert sorted(server - set(ours)) == [], "public routes the TypeScript SDK does not call"
    assert sorted(set(ours) - server) == [], "routes in the TypeScript SDK the server lacks"
    assert len(server) >= 35


def test_idempotency_flags_follow_the_503_contract() -> None:
    for name, (method, path, idempotent) in typescript_table().items():
        expected = method in {"GET", "PATCH", "DELETE"} or (method, path) in IDEMPOTENT_WRITES
        assert idempotent == expected, (name, method, path)


def test_generated_types_are_current() -> None:
    generator = _generator()
    committed = generator.TARGET.read_text(encoding="utf-8")
    fresh = generator.render(openapi())
    assert committed == fresh, (
        "sdk/typescript/src/types.gen.ts is stale: run "
        ".venv/bin/python sdk/typescript/scripts/gen_types.py"
    )
    for name in ("RecallRequest", "RecallOut", "ErrorResponse", "ListFactsQuery", "RunJobPath"):
        assert f"export interface {name} " in committed


def test_the_generator_maps_schemas_to_typescript() -> None:
    generator = _generator()
    schema = {
        "type": "object",
        "properties": {
            "a": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "b": {"type": "array", "items": {"$ref": "#/components/schemas/X"}},
            "c": {"type": "string", "enum": ["x", "y"]},
            "d": {"type": "object", "additionalProperties": {"type": "integer"}},
            "e-f": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "boolean"}]},
        },
        "required": ["b"],
    }
    out = generator.component("Thing", schema)
    assert "a?: string | null;" in out and "b: Array<X>;" in out
    assert 'c?: "x" | "y";' in out and "d?: Record<string, number>;" in out
    assert '"e-f"?: [number, boolean];' in out
