"""Statements only the tests run (set a status, drop token vectors, read raw state): loaded
by name like production's, e.g. ``statements(engine.store).write("recall/set_status", ...)``,
from this folder, which the production ``cypher.load`` never sees."""

from __future__ import annotations

from pathlib import Path

from cypher import Library
from pipelines.graph import GraphStore

LIBRARY = Library(Path(__file__).parent)


def statements(store: GraphStore) -> GraphStore:
    """``store`` running the tests' statements (same driver and database)."""
    return store.using(LIBRARY.load)
