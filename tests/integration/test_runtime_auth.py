"""Authentication of the local runtime against a real Neo4j: a database created without
authentication gets the operator's password when authentication is turned on (Neo4j's initial
password replaced over Bolt), then refuses anonymous and wrong logins; neo4j-admin's initial
password (given through a 0600 argument file) survives quoting; a database secured with
another password is refused with a message that says so."""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError

from neo4j_runtime import auth, runtime
from neo4j_runtime.settings import NEO4J_USER, InstanceConfig

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


def _instance(name: str, port: int) -> InstanceConfig:
    return InstanceConfig(
        name=name,
        base_dir=Path(tempfile.mkdtemp(prefix=f"mnemograph-auth-test-{name}-")),
        bolt_port=port,
        heap_initial="256m",
        heap_max="512m",
        pagecache="128m",
    )


@dataclass(frozen=True)
class Servers:
    turned_on: InstanceConfig  # created without authentication, started again with TRICKY
    fresh: InstanceConfig  # given TRICKY by neo4j-admin before its first start
    fresh_pid: int
    users: str  # the fresh database's auth.ini right after neo4j-admin
    admin_leftovers: list[Path]  # argument files left in its run dir


def _turn_auth_on(instance: InstanceConfig) -> InstanceConfig:
    runtime.start(instance, timeout=240, quiet=True)  # created without authentication
    runtime.stop(instance)
    secured = replace(instance, password=TRICKY)
    runtime.start(secured, timeout=240, quiet=True)  # initial password replaced over Bolt
    return secured


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
    names = ("on", "fresh")
    instances = [_instance(n, port) for n, port in zip(names, _free_ports(2), strict=True)]
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
    _login(secured, (NEO4J_USER, TRICKY))
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
