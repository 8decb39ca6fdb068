"""Authentication of the local runtime: the password of the user ``neo4j`` and how it is set.

Authentication is always on, on loopback too. An operator may give the password
(``MNEMOGRAPH_NEO4J_PASSWORD``); otherwise one is generated once per instance and kept in
``<instance dir>/neo4j-password`` with owner-only permissions (0600, in a 0700 directory), where
the API and a person reading the file find it (:mod:`neo4j_runtime.password`). A fresh
database gets it before its first start (``neo4j-admin dbms set-initial-password``, run through
a 0600 argument file so the password never appears on a command line); a database created
earlier without authentication (before it was always on) still has Neo4j's initial
``neo4j``/``neo4j`` account, whose password is changed over Bolt right after the start.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from neo4j_runtime import settings as S
from neo4j_runtime.password import PASSWORD_FILE, password_path, stored_password

__all__ = [
    "PASSWORD_FILE",
    "change_initial_password",
    "is_initialized",
    "password_path",
    "set_initial_password",
    "stored_password",
]

_INITIAL_PASSWORD = "neo4j"  # Neo4j's own initial password, which must be changed on first use
_ADMIN_TOOL = "org.neo4j.cli.AdminTool"


def is_initialized(instance: S.InstanceConfig) -> bool:
    """True once the server has created its system database (and so its users)."""
    return (instance.data_dir / "databases" / "system").exists()


def set_initial_password(
    instance: S.InstanceConfig, home: Path, java: Path, password: str, *, timeout: float = 120.0
) -> None:
    """``neo4j-admin dbms set-initial-password`` for a database that was never started."""
    if password.startswith("-"):
        raise ValueError(
            "a Neo4j password must not start with '-' (neo4j-admin reads it as an option)"
        )
    env = dict(
        os.environ,
        NEO4J_HOME=str(home),
        NEO4J_CONF=str(instance.conf_dir),
        JAVA_HOME=str(java.parent.parent),
    )
    fd, name = tempfile.mkstemp(prefix="admin-", suffix=".args", dir=instance.run_dir)
    try:
        with os.fdopen(fd, "w") as args:  # mkstemp creates the file 0600
            args.write(f"{_ADMIN_TOOL}\ndbms\nset-initial-password\n{_quoted(password)}\n")
        proc = subprocess.run(
            [str(java), "-cp", f"{home / 'lib'}/*", f"@{name}"],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    finally:
        Path(name).unlink(missing_ok=True)
    if proc.returncode != 0:
        detail = (proc.stdout + proc.stderr).replace(password, "***")[-2000:]
        raise RuntimeError(f"neo4j-admin set-initial-password failed:\n{detail}")


def change_initial_password(uri: str, password: str) -> bool:
    """Replace Neo4j's initial password with ``password``; False if the account has another one
    (the database was secured before, with a password that is not the one given)."""
    from neo4j import GraphDatabase
    from neo4j.exceptions import AuthError, Neo4jError

    import cypher

    try:
        with GraphDatabase.driver(uri, auth=(S.NEO4J_USER, _INITIAL_PASSWORD)) as driver:
            driver.execute_query(
                cypher.load("runtime/change_initial_password"),
                {"old": _INITIAL_PASSWORD, "new": password},
                database_="system",
            )
    except (AuthError, Neo4jError):
        return False
    return True


def _quoted(value: str) -> str:
    """One argument-file token (the JVM launcher's quoting rules)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
