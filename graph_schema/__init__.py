"""Graph schema: constraints, indexes and migrations, applied idempotently at start-up.

Migrations are ``migrations/NNNN_name.cypher`` files, statements separated by ``;``. Each
statement is idempotent (``IF NOT EXISTS``), so re-running is harmless; the runner records what
it applied as ``(:SchemaMigration {name, checksum, applied_at})`` nodes and re-applies a file
whose checksum changed. A migration listed in :data:`DATA_STEP_MIGRATIONS` also has a data
step, run right after its statements: data that Cypher alone cannot compute (e.g. hashes).
The caller supplies those steps (``pipelines.schema_data``): this package imports nothing from
``pipelines`` and reaches the database only through a :class:`SchemaStore`. After applying,
it checks that the vector indexes have the embedding model's dimension and refuses to
continue if not.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
VECTOR_INDEXES = (
    "memory_embedding",
    "schema_embedding",
    "chunk_embedding",
    "entity_embedding",
    "stage_embedding",
    "fact_embedding",
)
#: Migrations that need a data step from the caller (see :func:`apply`).
DATA_STEP_MIGRATIONS = frozenset({"0004_memory_text_space", "0005_session_text"})


class SchemaStore(Protocol):
    """What migrations need from the graph store: named statements and literal schema text."""

    def read(self, statement: str, /, **params: Any) -> list[dict[str, Any]]: ...

    def write(self, statement: str, /, **params: Any) -> list[dict[str, Any]]: ...

    def run_schema(self, text: str, /, **params: Any) -> None: ...


S = TypeVar("S", bound=SchemaStore)


class SchemaMismatch(RuntimeError):
    """The database's schema does not fit this build (e.g. a vector index of another size)."""


@dataclass
class MigrationReport:
    applied: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    index_states: list[dict[str, Any]] = field(default_factory=list)


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


def apply(
    store: S,
    dimensions: int,
    data_steps: Mapping[str, Callable[[S], None]] | None = None,
    await_seconds: int = 300,
) -> MigrationReport:
    """Apply pending migrations, wait for indexes, verify vector dimensions.

    ``data_steps`` maps a migration of :data:`DATA_STEP_MIGRATIONS` to its data step; a
    pending migration whose step is missing, or a step for another name, is a ``ValueError``
    (before anything is applied)."""
    steps = dict(data_steps or {})
    unknown = set(steps) - DATA_STEP_MIGRATIONS
    if unknown:
        raise ValueError(f"data steps for migrations that take none: {sorted(unknown)}")
    done = {r["name"]: r["checksum"] for r in store.read("schema/migrations_applied")}
    pending = [m for m in migrations() if done.get(m[0]) != m[1]]
    missing = sorted({name for name, _, _ in pending} & DATA_STEP_MIGRATIONS - set(steps))
    if missing:
        raise ValueError(f"pending migrations need their data steps: {missing}")
    report = MigrationReport(
        already=[name for name, checksum, _ in migrations() if done.get(name) == checksum]
    )
    for name, checksum, text in pending:
        # Schema statements cannot share a transaction with data writes: one each.
        for statement in _statements(text):
            store.run_schema(statement, dimensions=dimensions)
        if name in steps:
            steps[name](store)
        store.write("schema/record_migration", name=name, checksum=checksum)
        report.applied.append(name)
    store.write("schema/await_indexes", seconds=await_seconds)
    report.index_states = store.read("schema/index_states")
    check_dimensions(report.index_states, dimensions)
    return report


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
