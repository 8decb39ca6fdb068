"""The TypeScript SDK (sdk/typescript) against a live server on a real Neo4j.

Builds the package (``npm ci`` when node_modules is not current for package-lock.json, then
``tsc``), runs its Node tests (``node --test``) with the live servers' addresses in the
environment, and checks node's summary and that every public route was called with a 2xx.
Node 20 and npm are prerequisites: without them this test fails, it never skips.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.integration.conftest import Live
from tests.sdk_coverage import TS_SDK, public_routes, typescript_table

STAMP = TS_SDK / "node_modules" / ".mnemograph-lock.sha256"
SUMMARY = re.compile(r"^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$", re.M)


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: the TypeScript SDK tests need Node 20 and npm")
    return path


def _run(args: list[str], timeout: float, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        args, cwd=TS_SDK, capture_output=True, text=True, timeout=timeout, env=env, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{output[-6000:]}"
    return output


def _build() -> None:
    """``npm ci`` only when the lock file changed since the last install, then ``tsc``."""
    lock = hashlib.sha256((TS_SDK / "package-lock.json").read_bytes()).hexdigest()
    if not STAMP.exists() or STAMP.read_text().strip() != lock:
        _run([_tool("npm"), "ci", "--no-audit", "--no-fund"], timeout=300)
        STAMP.write_text(lock)
    _run([_tool("node"), "node_modules/typescript/bin/tsc", "-p", "."], timeout=120)


@pytest.fixture(scope="module")
def node_run(live: Live, live_secured: Live, tmp_path_factory: pytest.TempPathFactory):
    _build()
    out = tmp_path_factory.mktemp("ts-sdk") / "routes.json"
    env = {
        **os.environ,
        "MNEMOGRAPH_TEST_URL": live.url,
        "MNEMOGRAPH_TEST_SECURED_URL": live_secured.url,
        "MNEMOGRAPH_TEST_ADMIN_KEY": str(live_secured.admin_key),
        "MNEMOGRAPH_TEST_LIMITED_KEY": str(live_secured.limited_key),
        "MNEMOGRAPH_TEST_LIMITED_SPACE": str(live_secured.limited_space),
        "MNEMOGRAPH_TS_ROUTES_OUT": str(out),
    }
    env.pop("MNEMOGRAPH_URL", None)
    env.pop("MNEMOGRAPH_API_KEY", None)
    files = sorted(str(p.relative_to(TS_SDK)) for p in (TS_SDK / "test").glob("*.test.mjs"))
    assert files, "no Node test files in sdk/typescript/test"
    output = _run([_tool("node"), "--test", "--test-reporter=tap", *files], timeout=300, env=env)
    return output, out


def test_node_tests_pass_against_the_live_server(node_run: tuple[str, Path]) -> None:
    output, _ = node_run
    summary = {name: int(n) for name, n in SUMMARY.findall(output)}
    assert summary.get("fail") == 0 and summary.get("cancelled") == 0, output[-6000:]
    assert summary.get("skipped") == 0 and summary.get("todo") == 0, output[-6000:]
    assert summary.get("pass", 0) >= 15 and summary["pass"] == summary["tests"], summary


def test_every_public_route_is_called_by_the_typescript_sdk(node_run: tuple[str, Path]) -> None:
    _, out = node_run
    called = set(json.loads(out.read_text()))
    table = typescript_table()
    assert sorted(set(table) - called) == [], "routes of ROUTES no live test called with a 2xx"
    covered = {(table[name][0], table[name][1]) for name in called}
    assert sorted(public_routes() - covered) == []
