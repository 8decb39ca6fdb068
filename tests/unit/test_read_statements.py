"""The read path's statements (``cypher/read/``, ``cypher/assemble/``) write nothing: no
clause that changes the graph appears in them (comment lines aside)."""

from __future__ import annotations

import re
from pathlib import Path

import cypher

WRITES = re.compile(
    r"\b(CREATE|MERGE|SET|DELETE|DETACH|REMOVE|FOREACH|LOAD\s+CSV)\b|db\.create\.|"
    r"IN\s+TRANSACTIONS",
    re.IGNORECASE,
)
READ_FOLDERS = ("read", "assemble")


def _statements() -> list[Path]:
    return sorted(p for folder in READ_FOLDERS for p in (cypher.ROOT / folder).glob("*.cypher"))


def test_read_folders_hold_statements():
    assert len(_statements()) >= 10


def test_no_read_statement_writes():
    offenders = []
    for path in _statements():
        body = "\n".join(
            ln for ln in path.read_text(encoding="utf-8").splitlines() if not ln.startswith("//")
        )
        if m := WRITES.search(body):
            offenders.append(f"{path.relative_to(cypher.ROOT)}: {m.group(0)}")
    assert offenders == []
