"""Export: a space's records, streamed page by page (bounded memory on any space size)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from pipelines import spaces
from pipelines.graph import GraphStore
from pipelines.transfer import codec, spec
from pipelines.transfer.props import SPACE_INTERNAL, export_json

#: Nodes read per statement.
PAGE = 500

Record = dict[str, Any]


def _node_props(label: str, props: dict[str, Any], embeddings: bool) -> dict[str, Any]:
    dropped = set(spec.SPACE_PROPS)
    if not embeddings:
        dropped |= set(spec.VECTOR_PROPS.get(label, ()))
    kept = {k: v for k, v in props.items() if k not in dropped}
    return export_json(codec.encode_props(kept))


def _pages(store: GraphStore, name: str, label: str, space: str) -> Iterator[list[dict[str, Any]]]:
    """Pages of one label's rows in key order (keyset pagination)."""
    key = spec.NODES[label]
    after: str | None = None
    while True:
        rows = store.read(
            spec.node_statement(name, label),
            space=space,
            after=after,
            limit=PAGE,
            labels=list(spec.NODES),
        )
        if not rows:
            return
        yield rows
        after = rows[-1]["props"][key] if name == "export_nodes" else rows[-1]["key"]
        if len(rows) < PAGE:
            return


def records(store: GraphStore, space: str, embeddings: bool = False) -> Iterator[Record]:
    """The space's records: header, space, nodes, relationships, then their counts."""
    spaces.require(store, space)
    store = store.using(spec.statements())
    nodes: Counter[str] = Counter()
    rels: Counter[str] = Counter()
    yield {
        "type": "header",
        "format": spec.FORMAT,
        "space": space,
        "exported_at": datetime.now(UTC).isoformat(),
        "embeddings": embeddings,
    }
    space_props = store.read("transfer/export_space", space=space)[0]["props"]
    space_props = {k: v for k, v in space_props.items() if k not in SPACE_INTERNAL}
    yield {"type": "space", "props": export_json(codec.encode_props(space_props))}
    for label, key in spec.NODES.items():
        for page in _pages(store, "export_nodes", label, space):
            for row in page:
                nodes[label] += 1
                props = row["props"]
                yield {"type": "node", "label": label, "key": props[key],
                       "props": _node_props(label, props, embeddings)}  # fmt: skip
    for label in spec.NODES:
        for page in _pages(store, "export_rels", label, space):
            for row in page:
                for rel in row["out"]:
                    if rel is None or (label, rel["type"], rel["to_label"]) not in spec.RELS:
                        continue
                    rels[rel["type"]] += 1
                    yield {"type": "rel", "rel": rel["type"], "from_label": label,
                           "from": row["key"], "to_label": rel["to_label"], "to": rel["to"],
                           "props": codec.encode_props(rel["props"])}  # fmt: skip
    yield {"type": "counts", "nodes": dict(nodes), "relationships": dict(rels)}


def counts(store: GraphStore, space: str) -> dict[str, dict[str, int]]:
    """What an export of the space would hold, counted by the database."""
    spaces.require(store, space)
    store = store.using(spec.statements())
    nodes: dict[str, int] = {}
    rels: Counter[str] = Counter()
    for label in spec.NODES:
        n = store.read(spec.node_statement("count_nodes", label), space=space)[0]["n"]
        if n:
            nodes[label] = int(n)
        rows = store.read(
            spec.node_statement("count_rels", label), space=space, labels=list(spec.NODES)
        )
        for row in rows:
            rels[row["type"]] += int(row["n"])
    return {"nodes": nodes, "relationships": dict(rels)}
