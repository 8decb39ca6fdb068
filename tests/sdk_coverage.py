"""What the SDK coverage tests share: the API's public routes (from the OpenAPI document)
and each SDK's route table, as sets of ``(METHOD, path template)``.

An SDK is covered when its table holds every public route and nothing else, and its live
test calls each one. ``typescript_table`` reads ``sdk/typescript/src/routes.ts``;
tests/unit/test_sdk_coverage.py checks the Python SDK's table against the same routes.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TS_SDK = ROOT / "sdk" / "typescript"
METHODS = ("get", "post", "put", "patch", "delete")
Route = tuple[str, str]

# One entry of ROUTES: `name: { method: "GET", path: "/v1/...", idempotent: true },`
_TS_ENTRY = re.compile(
    r'^\s*(\w+): \{ method: "(\w+)", path: "([^"]+)", idempotent: (true|false) \},$', re.M
)


@lru_cache(maxsize=1)
def openapi() -> dict[str, Any]:
    from app.main import create_app
    from app.settings import Settings

    return create_app(Settings()).openapi()


def public_routes(doc: dict[str, Any] | None = None) -> set[Route]:
    """Every operation the OpenAPI document publishes (hidden routes are not in it)."""
    doc = doc or openapi()
    return {
        (method.upper(), path)
        for path, ops in doc["paths"].items()
        for method in ops
        if method in METHODS
    }


def typescript_table() -> dict[str, tuple[str, str, bool]]:
    """The TS SDK's ROUTES: client method -> (METHOD, path, idempotent)."""
    source = (TS_SDK / "src" / "routes.ts").read_text(encoding="utf-8")
    block = source[source.index("export const ROUTES") :]
    block = block[: block.index("} as const")]
    entries = _TS_ENTRY.findall(block)
    assert len(entries) == block.count("method:"), "an entry of ROUTES is not on one line"
    return {name: (method, path, flag == "true") for name, method, path, flag in entries}


def typescript_routes() -> set[Route]:
    return {(method, path) for method, path, _ in typescript_table().values()}
