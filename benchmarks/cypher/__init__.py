"""Statements only the benchmark harness runs (sizes of a space, the raw vector query of the
perf baseline): loaded by name from this folder, which the production ``cypher.load`` never
sees, e.g. ``statements(store).read("memories_per_space")``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cypher import Library

if TYPE_CHECKING:  # the harness imports the service lazily (start-up without the models)
    from pipelines.graph import GraphStore

LIBRARY = Library(Path(__file__).parent)


def statements(store: GraphStore) -> GraphStore:
    """``store`` running the harness's statements (same driver and database)."""
    return store.using(LIBRARY.load)
