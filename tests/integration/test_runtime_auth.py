"""Authentication of the local runtime against a real Neo4j: a database created without
authentication gets the operator's password when authentication is turned on (Neo4j's initial
password replaced over Bolt), then refuses anonymous and wrong logins; neo4j-admin's initial
password (given through a 0600 argument file) survives quoting; a database secured with
another password is refused with a message that says so."""

from __future__ import annotations

import shutil
import socket
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError

from neo4j_runtime import auth, runtime
from neo4j_runtime.settings import NEO4J_USER, InstanceConfig

TRICKY = 'a "quoted" pass\\word with spaces'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def instance():
    base = Path(tempfile.mkdtemp(prefix="mnemograph-auth-test-"))
    inst = InstanceConfig(
        name="auth",
        base_dir=base,
        bolt_port=_free_port(),
        heap_initial="256m",
        heap_max="512m",
        pagecache="128m",
    )
    yield inst
    runtime.stop(inst)
    shutil.rmtree(base, ignore_errors=True)


def _login(inst: InstanceConfig, credentials) -> None:
    with GraphDatabase.driver(inst.bolt_uri, auth=credentials) as driver:
        driver.verify_connectivity()
        driver.execute_query("RETURN 1", database_="neo4j")


def test_turning_auth_on_for_an_existing_database(instance):
    runtime.start(instance, timeout=240, quiet=True)  # created without authentication
    runtime.stop(instance)
    secured = replace(instance, password=TRICKY)
    runtime.start(secured, timeout=240, quiet=True)  # initial password replaced over Bolt
    _login(secured, (NEO4J_USER, TRICKY))
    with pytest.raises(AuthError):
        _login(secured, None)
    with pytest.raises(AuthError):
        _login(secured, (NEO4J_USER, "not the password"))


def test_initial_password_of_a_fresh_database(instance):
    home = runtime.fetch(quiet=True)
    java = runtime.find_java()
    secured = replace(instance, password=TRICKY)
    runtime.write_config(secured, home)
    auth.set_initial_password(secured, home, java, TRICKY)
    users = (secured.data_dir / "dbms" / "auth.ini").read_text()
    assert users.startswith(f"{NEO4J_USER}:SHA-256,") and TRICKY not in users
    assert not list(secured.run_dir.glob("admin-*"))  # the argument file is gone
    started = runtime.start(secured, timeout=240, quiet=True)
    _login(secured, (NEO4J_USER, TRICKY))
    # what a start does once the server answers, with a password the database does not have
    with pytest.raises(runtime.RuntimeErrorWithHint, match="secured with another"):
        runtime._wait_secured(replace(instance, password="another password"), 60, started.pid)
