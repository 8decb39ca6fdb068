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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pipelines import space_settings, spaces
from pipelines.errors import Conflict, InvalidInput, NotFound
from pipelines.graph import GraphStore, Tx
from pipelines.ingest.config import IngestConfig
from pipelines.ingest.text import embedding_input
from pipelines.models.embeddings import Embedder
from pipelines.models.late_interaction import TOKEN_DIMS, TOKEN_FORMAT, pack
from pipelines.spaces import SPACE_ID_PATTERN, fulltext_tag
from pipelines.transfer import props, spec

#: Records one import call may carry (a batch is one transaction).
MAX_BATCH = 5000


def _record_schema() -> dict[str, Any]:
    """The JSON schema of one export record, as :func:`plan` checks it: every label's and
    relationship's properties typed (:mod:`pipelines.transfer.props`)."""
    key = {"type": "string", "minLength": 1}
    plain = [
        {
            "required": ["type"],
            "properties": {"type": {"const": kind}, "props": {"type": ["object", "null"]}},
        }
        for kind in ("header", "counts")
    ]
    space = {
        "required": ["type"],
        "properties": {
            "type": {"const": "space"},
            "props": {
                "anyOf": [
                    props.props_schema(props.SPACE_PROPS, settings=_SETTINGS_REF),
                    {"type": "null"},
                ]
            },
        },
    }
    nodes = [
        {
            "required": ["type", "label", "key", *(["props"] if label in props.REQUIRED else [])],
            "properties": {
                "type": {"const": "node"},
                "label": {"const": label},
                "key": key,
                "props": _nullable(
                    props.props_schema(
                        props.NODE_PROPS[label], props.REQUIRED.get(label, ()), _enums(label)
                    ),
                    label not in props.REQUIRED,
                ),
            },
        }
        for label in sorted(spec.NODES)
    ]
    rels = [
        {
            "required": [*_REL_KEYS, *(["props"] if r in props.REL_REQUIRED else [])],
            "properties": {
                "type": {"const": "rel"},
                "from_label": {"const": a},
                "rel": {"const": r},
                "to_label": {"const": b},
                "from": key,
                "to": key,
                "props": _nullable(
                    props.props_schema(props.REL_PROPS.get(r, {}), props.REL_REQUIRED.get(r, ())),
                    r not in props.REL_REQUIRED,
                ),
            },
        }
        for a, r, b in sorted(spec.RELS)
    ]
    return {"type": "object", "oneOf": [*plain, space, *nodes, *rels]}


#: What every relationship record names.
_REL_KEYS = ("type", "from_label", "rel", "to_label", "from", "to")
#: A space record's settings: what a new space's may hold (the OpenAPI component).
_SETTINGS_REF = {"$ref": "#/components/schemas/SpaceSettings"}


def _nullable(schema: dict[str, Any], nullable: bool) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]} if nullable else schema


def _enums(label: str) -> dict[str, tuple[str, ...]]:
    return {name: values for (lab, name), values in props.ENUMS.items() if lab == label}


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


def _node_row(
    space: str, record: dict[str, Any], where: str, dimensions: int
) -> tuple[str, dict[str, Any]]:
    label, key = record.get("label"), record.get("key")
    if not isinstance(label, str) or label not in spec.NODES:
        raise InvalidInput(
            f"{where}.label: not an exported label: {label!r}", field=f"{where}.label"
        )
    if not isinstance(key, str) or not key:
        raise InvalidInput(f"{where}.key: a non-empty string is required", field=f"{where}.key")
    found = props.check_props(
        record.get("props"),
        props.NODE_PROPS[label],
        f"{where}.props",
        props.REQUIRED.get(label, ()),
        _enums(label),
    )
    _drop_unusable_vectors(found, dimensions)
    found.update({spec.NODES[label]: key, "space": space})
    if label in ("Memory", "Session"):
        found["space_tag"] = fulltext_tag(space)
    embedding = found.pop("embedding", None)
    return label, {"key": key, "props": found, "embedding": embedding}


def _drop_unusable_vectors(found: dict[str, Any], dimensions: int) -> None:
    """Vectors of another length than the model's, and token vectors that do not decode,
    are dropped: what is missing is rebuilt (memories and schemas embedded here, the rest by
    their jobs), never read back malformed."""
    for name in ("embedding", "condition_embedding"):
        if name in found and len(found[name]) != dimensions:
            del found[name]
    tokens = found.get("token_vectors")
    if tokens is not None or "token_format" in found:
        usable = (
            isinstance(tokens, bytes)
            and found.get("token_format") == TOKEN_FORMAT
            and len(tokens) > 0
            and len(tokens) % TOKEN_DIMS == 0
        )
        if not usable:
            found.pop("token_vectors", None)
            found.pop("token_format", None)


def _rel_row(record: dict[str, Any], where: str) -> tuple[tuple[str, str, str], dict[str, Any]]:
    shape = (record.get("from_label"), record.get("rel"), record.get("to_label"))
    if not all(isinstance(part, str) for part in shape) or shape not in spec.RELS:
        raise InvalidInput(f"{where}: not an exported relationship: {shape!r}", field=where)
    ends = (record.get("from"), record.get("to"))
    if not all(isinstance(e, str) and e for e in ends):
        raise InvalidInput(f"{where}: 'from' and 'to' keys are required", field=where)
    found = props.check_props(
        record.get("props"),
        props.REL_PROPS.get(str(shape[1]), {}),
        f"{where}.props",
        props.REL_REQUIRED.get(str(shape[1]), ()),
    )
    return (str(shape[0]), str(shape[1]), str(shape[2])), {
        "from": ends[0],
        "to": ends[1],
        "props": found,
    }


def _plain_props(record: dict[str, Any], where: str) -> None:
    """A header's or counts record's ``props``: an object or null (nothing of it is written)."""
    if record.get("props") is not None and not isinstance(record.get("props"), dict):
        raise InvalidInput(f"{where}.props: must be an object", field=f"{where}.props")


def plan(space: str, records: Sequence[dict[str, Any]], dimensions: int) -> _Plan:
    """Check every record and group it (nothing is written unless all are valid);
    ``dimensions``: the embedding model's."""
    out = _Plan()
    for i, record in enumerate(records):
        where = f"records.{i}"
        kind = record.get("type")
        if kind in ("header", "counts"):
            _plain_props(record, where)
        elif kind == "space":
            found = props.check_props(
                record.get("props"),
                props.SPACE_PROPS,
                f"{where}.props",
                settings=_check_settings(f"{where}.props.settings"),
            )
            for name in props.SPACE_INTERNAL | {"id"}:
                found.pop(name, None)
            out.space_props = {**found, "id": space}
        elif kind == "node":
            label, row = _node_row(space, record, where, dimensions)
            out.nodes[label].append(row)
        elif kind == "rel":
            shape, row = _rel_row(record, where)
            out.rels[shape].append(row)
        else:
            raise InvalidInput(f"{where}.type: unknown record type {kind!r}", field=f"{where}.type")
    return out


def _check_settings(field: str) -> Callable[[dict[str, Any]], object]:
    """A space record's settings checked as a new space's, the field named in full."""

    def check(settings: dict[str, Any]) -> object:
        try:
            return space_settings.validate(settings)
        except InvalidInput as exc:
            inner = (exc.field or "settings").removeprefix("settings")
            raise InvalidInput(str(exc), field=field + inner) from exc

    return check


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
        if written != len(rel_rows):  # well formed, but the space lacks an end: 409
            raise Conflict(
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
    work = plan(space, records, embedder.dimensions)
    if work.space_props is None and not _space_exists(store, space):
        raise NotFound(
            f"space {space!r} does not exist; the first batch must hold the export's "
            "'space' record",
            field="space",
        )
    embed_missing(embedder, config, work.nodes)
    templated = store.using(spec.statements())
    return templated.write_tx(lambda tx: _write(tx, space, work))


def _valid_space(space: str) -> bool:
    return re.fullmatch(SPACE_ID_PATTERN, space) is not None


def _space_exists(store: GraphStore, space: str) -> bool:
    return bool(store.read("spaces/get", space=space))
