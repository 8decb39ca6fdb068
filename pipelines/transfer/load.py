"""Import: records of an export written into a space, one batch per transaction.

Nodes are merged on their key and their properties replaced, relationships merged between
their ends, so a batch sent twice changes nothing. Ids, times, statuses and supersession
history are written as exported; what depends on the space id (``space``, the full-text
``space_tag``) is rewritten for the target space, so a space can move to another id. Without
exported embeddings, memories are embedded (with their late-interaction token vectors) as
ingest embeds them, and stage schemas as the schemas job does.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pipelines import spaces
from pipelines.errors import InvalidInput
from pipelines.graph import GraphStore, Tx
from pipelines.ingest.config import IngestConfig
from pipelines.ingest.text import embedding_input
from pipelines.models.embeddings import Embedder
from pipelines.models.late_interaction import TOKEN_FORMAT, pack
from pipelines.spaces import SPACE_ID_PATTERN, fulltext_tag
from pipelines.transfer import codec, spec

#: Records one import call may carry (a batch is one transaction).
MAX_BATCH = 5000


def _record_schema() -> dict[str, Any]:
    """The JSON schema of one export record, as :func:`plan` checks it."""
    key = {"type": "string", "minLength": 1}
    props = {"type": ["object", "null"]}
    plain = [
        {"required": ["type"], "properties": {"type": {"const": kind}, "props": props}}
        for kind in ("header", "space", "counts")
    ]
    node = {
        "required": ["type", "label", "key"],
        "properties": {
            "type": {"const": "node"},
            "label": {"enum": sorted(spec.NODES)},
            "key": key,
            "props": props,
        },
    }
    rels = [
        {
            "required": ["type", "from_label", "rel", "to_label", "from", "to"],
            "properties": {
                "type": {"const": "rel"},
                "from_label": {"const": a},
                "rel": {"const": r},
                "to_label": {"const": b},
                "from": key,
                "to": key,
                "props": props,
            },
        }
        for a, r, b in sorted(spec.RELS)
    ]
    return {"type": "object", "oneOf": [*plain, node, *rels]}


class ImportBatch(BaseModel):
    """The body of an import call: records of an export, in file order."""

    model_config = ConfigDict(extra="forbid")

    records: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=MAX_BATCH,
        json_schema_extra={"items": _record_schema()},
    )


@dataclass
class _Plan:
    space_props: dict[str, Any] | None = None
    nodes: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    rels: dict[tuple[str, str, str], list[dict[str, Any]]] = field(
        default_factory=lambda: defaultdict(list)
    )


def _props(record: dict[str, Any], where: str) -> dict[str, Any]:
    """A record's decoded ``props``: an object (absent or null: none)."""
    props = record.get("props")
    if props is None:
        props = {}
    if not isinstance(props, dict):
        raise InvalidInput(f"{where}.props: must be an object", field=f"{where}.props")
    return codec.decode_props(dict(props), f"{where}.props")


def _node_row(space: str, record: dict[str, Any], where: str) -> tuple[str, dict[str, Any]]:
    label, key = record.get("label"), record.get("key")
    if not isinstance(label, str) or label not in spec.NODES:
        raise InvalidInput(
            f"{where}.label: not an exported label: {label!r}", field=f"{where}.label"
        )
    if not isinstance(key, str) or not key:
        raise InvalidInput(f"{where}.key: a non-empty string is required", field=f"{where}.key")
    props = _props(record, where)
    props.update({spec.NODES[label]: key, "space": space})
    if label in ("Memory", "Session"):
        props["space_tag"] = fulltext_tag(space)
    embedding = props.pop("embedding", None)
    return label, {"key": key, "props": props, "embedding": embedding}


def _rel_row(record: dict[str, Any], where: str) -> tuple[tuple[str, str, str], dict[str, Any]]:
    shape = (record.get("from_label"), record.get("rel"), record.get("to_label"))
    if not all(isinstance(part, str) for part in shape) or shape not in spec.RELS:
        raise InvalidInput(f"{where}: not an exported relationship: {shape!r}", field=where)
    ends = (record.get("from"), record.get("to"))
    if not all(isinstance(e, str) and e for e in ends):
        raise InvalidInput(f"{where}: 'from' and 'to' keys are required", field=where)
    props = _props(record, where)
    return shape, {"from": ends[0], "to": ends[1], "props": props}


def plan(space: str, records: Sequence[dict[str, Any]]) -> _Plan:
    """Check every record and group it (nothing is written unless all are valid)."""
    out = _Plan()
    for i, record in enumerate(records):
        where = f"records.{i}"
        kind = record.get("type")
        if kind in ("header", "counts"):
            continue
        if kind == "space":
            props = _props(record, where)
            out.space_props = {**props, "id": space}
        elif kind == "node":
            label, row = _node_row(space, record, where)
            out.nodes[label].append(row)
        elif kind == "rel":
            shape, row = _rel_row(record, where)
            out.rels[shape].append(row)
        else:
            raise InvalidInput(f"{where}.type: unknown record type {kind!r}", field=f"{where}.type")
    return out


def embed_missing(
    embedder: Embedder, config: IngestConfig, nodes: dict[str, list[dict[str, Any]]]
) -> None:
    """Embed memories and schemas that arrived without vectors, as ingest and the schemas
    job embed them (memories get their token vectors from the same pass)."""
    memories = [r for r in nodes.get("Memory", []) if r["embedding"] is None]
    if memories:
        inputs = [
            embedding_input(r["props"].get("text", ""), r["props"].get("speaker"),
                            with_speaker=config.embed_speaker)
            for r in memories
        ]  # fmt: skip
        with_tokens = getattr(embedder, "encode_with_tokens", None)
        if config.token_vectors and with_tokens is not None:
            vectors, tokens = with_tokens(inputs)
            for r, tok in zip(memories, tokens, strict=True):
                r["props"]["token_vectors"] = pack(tok)
                r["props"]["token_format"] = TOKEN_FORMAT
        else:
            vectors = embedder.encode(inputs)
        for r, vec in zip(memories, vectors, strict=True):
            r["embedding"] = [float(x) for x in vec]
    schemas = [r for r in nodes.get("Schema", []) if r["embedding"] is None]
    if schemas:
        vectors = embedder.encode([r["props"].get("summary", "") for r in schemas])
        for r, vec in zip(schemas, vectors, strict=True):
            r["embedding"] = [float(x) for x in vec]


def _write(tx: Tx, space: str, work: _Plan) -> dict[str, dict[str, int]]:
    nodes: Counter[str] = Counter()
    rels: Counter[str] = Counter()
    # a space being erased stays erased: its Space node's properties are not replaced
    spaces.lock_for_write(tx, space, creating=work.space_props is not None)
    if work.space_props is not None:
        tx.run("transfer/import_space", space=space, props=work.space_props)
    for label in spec.NODES:
        node_rows = work.nodes.get(label)
        if node_rows:
            out = tx.run(spec.node_statement("import_nodes", label), space=space, rows=node_rows)
            nodes[label] += int(out[0]["written"])
    for shape, rel_rows in sorted(work.rels.items()):
        written = int(tx.run(spec.rel_statement(shape), space=space, rows=rel_rows)[0]["written"])
        if written != len(rel_rows):
            raise InvalidInput(
                f"{len(rel_rows) - written} {shape[1]} relationship(s) name a node that is neither "
                "in this batch nor in the space: send the export's records in file order",
                field="records",
            )
        rels[shape[1]] += written
    return {"nodes": dict(nodes), "relationships": dict(rels)}


def import_records(
    store: GraphStore,
    embedder: Embedder,
    config: IngestConfig,
    space: str,
    records: Sequence[dict[str, Any]],
) -> dict[str, dict[str, int]]:
    """Write one batch of records into ``space`` in one transaction; returns what it wrote."""
    if not _valid_space(space):
        raise InvalidInput(f"space: {space!r} is not a valid space id", field="space")
    work = plan(space, records)
    if work.space_props is None and not _space_exists(store, space):
        raise InvalidInput(
            "records: the space does not exist; the first batch must hold the export's "
            "'space' record",
            field="records",
        )
    embed_missing(embedder, config, work.nodes)
    templated = store.using(spec.statements())
    return templated.write_tx(lambda tx: _write(tx, space, work))


def _valid_space(space: str) -> bool:
    return re.fullmatch(SPACE_ID_PATTERN, space) is not None


def _space_exists(store: GraphStore, space: str) -> bool:
    return bool(store.read("spaces/get", space=space))
