"""What an export holds: the labels (with their key property) and relationship shapes of a
space, and the named Cypher templates filled from them.

Job runs and leases are the server's bookkeeping, not the space's content, and are not
exported; GDS projections are rebuilt on demand.
"""

from __future__ import annotations

from collections.abc import Callable

import cypher

FORMAT = "mnemograph-space/1"

#: Exported labels in import order, each with its key property (unique with ``space``).
NODES: dict[str, str] = {
    "Stage": "id",
    "Session": "id",
    "Memory": "id",
    "Chunk": "id",
    "Entity": "key",
    "EntityCandidate": "key",
    "Fact": "id",
    "Schema": "id",
    "Merge": "id",
}

#: Relationship shapes: (from label, type, to label), as docs/graph-model.md lists them.
RELS: frozenset[tuple[str, str, str]] = frozenset(
    {
        ("Memory", "IN_SESSION", "Session"),
        ("Memory", "NEXT", "Memory"),
        ("Memory", "IN_STAGE", "Stage"),
        ("Session", "IN_STAGE", "Stage"),
        ("Stage", "NEXT_STAGE", "Stage"),
        ("Chunk", "CHUNK_OF", "Memory"),
        ("Memory", "MENTIONS", "Entity"),
        ("Entity", "CO_OCCURS", "Entity"),
        ("Entity", "ALIAS_OF", "Entity"),
        ("Fact", "EXTRACTED_FROM", "Memory"),
        ("Memory", "SUPERSEDES", "Memory"),
        ("Fact", "SUPERSEDES", "Fact"),
        ("Memory", "MERGED_INTO", "Memory"),
        ("Schema", "SUMMARIZES", "Stage"),
    }
)

#: Properties that are embeddings or derived from them (left out without ``embeddings``).
VECTOR_PROPS: dict[str, tuple[str, ...]] = {
    "Memory": ("embedding", "token_vectors", "token_format"),
    "Chunk": ("embedding", "token_vectors", "token_format"),
    "Entity": ("embedding", "embedding_n"),
    "Stage": ("embedding", "embedding_n"),
    "Fact": ("embedding",),
    "Schema": ("embedding",),
}

#: Properties that depend on the space id (rewritten on import).
SPACE_PROPS = ("space", "space_tag")


def node_statement(name: str, label: str) -> str:
    """``transfer/<name>`` for one label, e.g. ``node_statement("export_nodes", "Memory")``."""
    if label not in NODES:
        raise KeyError(f"not an exported label: {label!r}")
    return f"{name}@{label}"


def rel_statement(shape: tuple[str, str, str]) -> str:
    if shape not in RELS:
        raise KeyError(f"not an exported relationship: {shape!r}")
    return "import_rels@" + ">".join(shape)


def _fill(text: str, binding: str) -> str:
    parts = binding.split(">")
    if len(parts) == 1:
        (label,) = parts
        if label not in NODES:
            raise cypher.UnknownStatement(f"no exported label {label!r}")
        return text.replace("__LABEL__", label).replace("__KEY__", NODES[label])
    src, rel, dst = parts
    if (src, rel, dst) not in RELS:
        raise cypher.UnknownStatement(f"no exported relationship {binding!r}")
    return (
        text.replace("__FROM_KEY__", NODES[src])
        .replace("__TO_KEY__", NODES[dst])
        .replace("__FROM__", src)
        .replace("__TO__", dst)
        .replace("__TYPE__", rel)
    )


def statements(load: Callable[[str], str] = cypher.load) -> Callable[[str], str]:
    """A statement source for :meth:`GraphStore.using`: ``name@binding`` is the template
    ``transfer/name`` filled from the allowlists above (never from a request); any other
    name loads as usual."""

    def resolve(name: str) -> str:
        base, sep, binding = name.partition("@")
        if not sep:
            return load(name)
        return _fill(load(f"transfer/{base}"), binding)

    return resolve
