"""Authentication of the local runtime against a real Neo4j (always on, loopback too): a
database created without authentication (as before it was always on) gets the generated
password on its next start (Neo4j's initial password replaced over Bolt), then refuses anonymous
and wrong logins; neo4j-admin's initial password (given through a 0600 argument file) survives
quoting; Bolt and the HTTP API behind Browser refuse a request without credentials; the
instance directory, data and password file are owner-only; a database secured with another
password is refused with a message that says so."""

from __future__ import annotations

import shutil
import socket
import stat
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError

from neo4j_runtime import auth, runtime
from neo4j_runtime.settings import NEO4J_USER, InstanceConfig
from tests.cypher import LIBRARY

TRICKY = 'a "quoted" pass\\word with spaces'


def _free_ports(n: int) -> list[int]:
    """``n`` distinct free ports (the sockets are held until all are chosen)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


def _instance(name: str, port: int, http_port: int | None = None) -> InstanceConfig:
    return InstanceConfig(
        name=name,
        base_dir=Path(tempfile.mkdtemp(prefix=f"mnemograph-auth-test-{name}-")),
        bolt_port=port,
        http_port=http_port,
        heap_initial="256m",
        heap_max="512m",
        pagecache="128m",
    )


@dataclass(frozen=True)
class Servers:
    turned_on: InstanceConfig  # created without authentication, started again as usual
    fresh: InstanceConfig  # given TRICKY by neo4j-admin before its first start
    fresh_pid: int
    users: str  # the fresh database's auth.ini right after neo4j-admin
    admin_leftovers: list[Path]  # argument files left in its run dir


def _turn_auth_on(instance: InstanceConfig) -> InstanceConfig:
    # a database of before authentication was always on: created without it
    legacy = replace(instance, extra={"dbms.security.auth_enabled": "false"})
    runtime.start(legacy, timeout=240, quiet=True)
    runtime.stop(legacy)
    runtime.start(instance, timeout=240, quiet=True)  # initial password replaced over Bolt
    return instance


def _fresh_with_password(instance: InstanceConfig) -> tuple[InstanceConfig, int, str, list[Path]]:
    home = runtime.fetch(quiet=True)
    java = runtime.find_java()
    secured = replace(instance, password=TRICKY)
    runtime.write_config(secured, home)
    auth.set_initial_password(secured, home, java, TRICKY)
    users = (secured.data_dir / "dbms" / "auth.ini").read_text()
    leftovers = list(secured.run_dir.glob("admin-*"))
    started = runtime.start(secured, timeout=240, quiet=True)
    return secured, started.pid, users, leftovers


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    """Both scenarios' servers, independent of each other and prepared side by side (one after
    the other, their starts and stops took about three minutes of the suite)."""
    on, fresh, http = _free_ports(3)
    instances = [_instance("on", on), _instance("fresh", fresh, http)]  # fresh: with Browser
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            turned = pool.submit(_turn_auth_on, instances[0])
            fresh = pool.submit(_fresh_with_password, instances[1])
        # .result() raises a failed start's error: the tests fail with its reason
        yield Servers(turned.result(), *fresh.result())
    finally:
        for inst in instances:
            runtime.stop(inst, timeout=0)  # throw-away servers: killed, no shutdown checkpoint
            shutil.rmtree(inst.base_dir, ignore_errors=True)


def _login(inst: InstanceConfig, credentials) -> None:
    with GraphDatabase.driver(inst.bolt_uri, auth=credentials) as driver:
        driver.verify_connectivity()
        driver.execute_query("RETURN 1", database_="neo4j")


def test_turning_auth_on_for_an_existing_database(servers):
    secured = servers.turned_on
    generated = auth.password_path(secured.base_dir).read_text().strip()
    assert secured.auth == (NEO4J_USER, generated)
    _login(secured, (NEO4J_USER, generated))
    with pytest.raises(AuthError):
        _login(secured, None)
    with pytest.raises(AuthError):
        _login(secured, (NEO4J_USER, "not the password"))


def test_initial_password_of_a_fresh_database(servers):
    assert servers.users.startswith(f"{NEO4J_USER}:SHA-256,") and TRICKY not in servers.users
    assert not servers.admin_leftovers  # the argument file is gone
    _login(servers.fresh, (NEO4J_USER, TRICKY))
    # what a start does once the server answers, with a password the database does not have
    with pytest.raises(runtime.RuntimeErrorWithHint, match="secured with another"):
        runtime._wait_secured(
            replace(servers.fresh, password="another password"), 60, servers.fresh_pid
        )


def test_nothing_answers_without_credentials(servers):
    """Bolt and the HTTP API Browser runs queries through refuse an anonymous request. (Logged
    in first: after three failed logins Neo4j refuses the user for a few seconds.)"""
    inst = servers.fresh
    base = f"http://127.0.0.1:{inst.http_port}"
    query = {"statements": [{"statement": LIBRARY.load("runtime/any_memory_text")}]}
    commit = f"{base}/db/neo4j/tx/commit"
    logged_in = httpx.post(commit, json=query, auth=(NEO4J_USER, TRICKY), timeout=30)
    assert logged_in.status_code == 200 and logged_in.json()["errors"] == [], logged_in.text
    anonymous = httpx.post(commit, json=query, timeout=30)
    assert anonymous.status_code == 401, anonymous.text
    with pytest.raises(AuthError):
        _login(inst, None)
    page = httpx.get(f"{base}/browser/", timeout=30)  # the login form itself is public
    assert page.status_code == 200 and "<html" in page.text.lower()
    assert inst.browser_url == f"http://127.0.0.1:{inst.http_port}/browser/"  # no NO_AUTH preset


def test_instance_files_are_owner_only(servers):
    """After a real start: the instance, its data, logs and password file are the owner's."""
    for inst in (servers.turned_on, servers.fresh):
        for d in (inst.base_dir, inst.data_dir, inst.logs_dir, inst.run_dir, inst.conf_dir):
            assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
    password_file = auth.password_path(servers.turned_on.base_dir)
    assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
