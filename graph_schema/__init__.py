"""Graph schema: constraints, indexes and migrations, applied idempotently at start-up.

Migrations are ``migrations/NNNN_name.cypher`` files, statements separated by ``;``. Each
statement is idempotent (``IF NOT EXISTS``), so re-running is harmless; the runner records what
it applied as ``(:SchemaMigration {name, checksum, applied_at})`` nodes and re-applies a file
whose checksum changed. A migration may have a data step (``DATA_STEPS``), run right after its
statements: a Python function, for data that Cypher alone cannot compute (e.g. hashes). After
applying, it checks that the vector indexes have the embedding model's dimension and refuses to
continue if not.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cypher
from pipelines import session_documents
from pipelines.graph import GraphStore, Tx
from pipelines.spaces import fulltext_tag

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
VECTOR_INDEXES = ("memory_embedding", "schema_embedding")


class SchemaMismatch(RuntimeError):
    """The database's schema does not fit this build (e.g. a vector index of another size)."""


@dataclass
class MigrationReport:
    applied: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    index_states: list[dict[str, object]] = field(default_factory=list)


def _statements(text: str) -> list[str]:
    body = "\n".join(ln for ln in text.splitlines() if not ln.strip().startswith("//"))
    return [s.strip() for s in body.split(";") if s.strip()]


def migrations() -> list[tuple[str, str, str]]:
    """(name, checksum, text) of every migration file, in order."""
    out = []
    for path in sorted(MIGRATIONS_DIR.glob("*.cypher")):
        text = path.read_text(encoding="utf-8")
        out.append((path.stem, hashlib.sha256(text.encode()).hexdigest()[:16], text))
    return out


def _tag_memories(store: GraphStore) -> None:
    """0004: give existing memories the full-text space tag (new ones get it at ingest)."""
    for row in store.read("schema/untagged_spaces"):
        with store.session() as session:
            session.run(
                cypher.load("schema/tag_space_memories"),
                {"space": row["space"], "space_tag": fulltext_tag(row["space"])},
            ).consume()


def _session_documents(store: GraphStore) -> None:
    """0005: build the documents of existing sessions (new ones get theirs at ingest)."""
    for row in store.read("schema/sessions_without_documents"):
        store.write_tx(lambda tx, space=row["space"]: session_documents.refresh(tx, space, None))


DATA_STEPS: dict[str, Callable[[GraphStore], None]] = {
    "0004_memory_text_space": _tag_memories,
    "0005_session_text": _session_documents,
}


def apply(store: GraphStore, dimensions: int, await_seconds: int = 300) -> MigrationReport:
    """Apply pending migrations, wait for indexes, verify vector dimensions."""
    report = MigrationReport()
    done = {r["name"]: r["checksum"] for r in store.read("schema/migrations_applied")}
    for name, checksum, text in migrations():
        if done.get(name) == checksum:
            report.already.append(name)
            continue
        # Schema statements cannot share a transaction with data writes: one each.
        for statement in _statements(text):
            with store.session() as session:
                session.run(statement, {"dimensions": dimensions}).consume()
        if name in DATA_STEPS:
            DATA_STEPS[name](store)
        store.write_tx(lambda tx, n=name, c=checksum: _record(tx, n, c))
        report.applied.append(name)
    store.write("schema/await_indexes", seconds=await_seconds)
    report.index_states = store.read("schema/index_states")
    check_dimensions(report.index_states, dimensions)
    return report


def _record(tx: Tx, name: str, checksum: str) -> None:
    tx.run("schema/record_migration", name=name, checksum=checksum)


def check_dimensions(index_states: list[dict[str, object]], dimensions: int) -> None:
    by_name = {str(i["name"]): i for i in index_states}
    for name in VECTOR_INDEXES:
        idx = by_name.get(name)
        if idx is None:
            raise SchemaMismatch(f"vector index {name!r} is missing")
        if idx.get("dimensions") != dimensions:
            raise SchemaMismatch(
                f"vector index {name!r} has {idx.get('dimensions')} dimensions but the embedding "
                f"model produces {dimensions}. Refusing to start: drop the index (and re-embed) "
                "or configure the matching model."
            )
