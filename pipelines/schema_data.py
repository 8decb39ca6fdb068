"""The data steps of schema migrations: data that Cypher alone cannot compute, filled in for
what existed before the migration (new data gets it at ingest). :data:`DATA_STEPS` is handed
to :func:`graph_schema.apply` by the engine."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pipelines import session_documents, spaces
from pipelines.graph import GraphStore, Tx


def tag_memories(store: GraphStore) -> None:
    """0004: give existing memories the full-text space tag (a hash of their space)."""
    for row in store.read("schema/untagged_spaces"):
        store.write_autocommit(
            "schema/tag_space_memories",
            space=row["space"],
            space_tag=spaces.fulltext_tag(row["space"]),
        )


def build_session_documents(store: GraphStore) -> None:
    """0005: build the documents of existing sessions, one space per transaction."""
    for row in store.read("schema/sessions_without_documents"):
        space = str(row["space"])

        def work(tx: Tx, space: str = space) -> int:
            return session_documents.refresh(tx, space, None)

        store.write_tx(work)


DATA_STEPS: Mapping[str, Callable[[GraphStore], None]] = {
    "0004_memory_text_space": tag_memories,
    "0005_session_text": build_session_documents,
}
