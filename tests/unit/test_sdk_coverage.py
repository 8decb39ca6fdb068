"""The SDK calls every public route of the API: the OpenAPI document walked against the
SDK's route table (mnemograph.client.routes), which the clients build their paths from; the
integration test tests/integration/test_sdk_routes.py sends every entry to a live server."""

from __future__ import annotations

import inspect
from pathlib import Path

from mnemograph.client import AsyncClient, Client
from mnemograph.client.calls import Endpoints
from mnemograph.client.routes import NOT_CALLED, ROUTES
from tests.sdk_coverage import public_routes


def test_every_public_route_is_called_by_the_sdk() -> None:
    called = {(r.method, r.template) for r in ROUTES.values()}
    missing = sorted(public_routes() - called - set(NOT_CALLED))
    assert missing == [], f"routes the Python SDK does not call: {missing}"


def test_the_table_names_only_real_routes() -> None:
    routes = public_routes()
    stale = sorted({(r.method, r.template) for r in ROUTES.values()} - routes)
    assert stale == [], f"SDK routes the server does not have: {stale}"
    assert set(NOT_CALLED) <= routes


def test_each_table_entry_is_a_method_of_both_clients() -> None:
    for name in ROUTES:
        sync, aio = getattr(Client, name, None), getattr(AsyncClient, name, None)
        assert callable(sync), f"Client.{name}"
        assert callable(aio), f"AsyncClient.{name}"
        sync_params = list(inspect.signature(sync).parameters)
        aio_params = list(inspect.signature(aio).parameters)
        assert sync_params == aio_params, f"{name}: {sync_params} != {aio_params}"


def test_each_endpoint_builds_its_path_from_the_table() -> None:
    """Every built call's method and path are its route's, filled in (escaped)."""
    special = "a b/c:d"
    args = {
        "space": special,
        "memory_id": special,
        "key": special,
        "stage_id": special,
        "job": "decay",
        "run_id": special,
        "merge_id": special,
        "supersession_id": special,
    }
    for name, member in vars(Endpoints).items():
        if name.startswith("_") or not isinstance(member, staticmethod):
            continue
        fn = member.__func__
        params = inspect.signature(fn).parameters
        values = {p: args.get(p) for p in params}
        call = fn(**{p: ({} if p in ("session", "options") else v) for p, v in values.items()})
        route = ROUTES[name]
        fill = {p: args[p] for p in params if "{" + p + "}" in route.template}
        assert (call.method, call.path) == (route.method, route.path(**fill)), name
        assert "a%20b%2Fc%3Ad" in call.path or "{" not in route.template, name


def test_idempotency_follows_the_route_and_explicit_ids() -> None:
    assert Endpoints.recall("s", "q", None, {}).idempotent
    assert Endpoints.delete_memory("s", "m").idempotent
    assert not Endpoints.supersede("s", "m", "r", "new", None).idempotent
    assert not Endpoints.run_job("s", "decay", None).idempotent
    with_ids = {"session_id": "x", "turns": [{"id": "t1", "role": "user", "content": "c"}]}
    without = {"session_id": "x", "turns": [{"role": "user", "content": "c"}]}
    assert Endpoints.add_session("s", with_ids).idempotent
    assert not Endpoints.add_session("s", without).idempotent
    assert Endpoints.add_memories("s", [{"id": "m", "content": "c"}], {}).idempotent
    assert not Endpoints.add_memories("s", [{"content": "c"}, {"id": "m"}], {}).idempotent


def test_the_reference_lists_every_method() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "sdk.md").read_text(encoding="utf-8")
    missing = [
        name for name, r in ROUTES.items() if f"| `{name}` | `{r.method} {r.template}`" not in text
    ]
    assert missing == []
