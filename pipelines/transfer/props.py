"""The properties an export writes for each label and relationship type, as JSON, checked on
import so that nothing an import accepts can break a later read.

Each known property has a type (:data:`NODE_PROPS`, :data:`REL_PROPS`); a property of no
known name may be any graph value (a string, number, boolean, a time, bytes, or a list of
strings, numbers or booleans). Properties stored as JSON text (a memory's ``gate`` and
``metadata``, a merge's ``canonical_before`` / ``canonical_after``, a space's ``settings``)
travel as JSON objects; a space's settings are checked as a new space's are. The same tables
give the import body's JSON schema, so the schema states exactly what the check enforces.

Vectors the schema cannot bound (their length is the embedding model's) are checked against
the model by :func:`~pipelines.transfer.load.plan`: one of another length is dropped, and
rebuilt as a missing one is.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from pipelines.errors import InvalidInput
from pipelines.transfer import codec

#: Integers a property may hold: Neo4j's 64 bits, within what a float (the schema's
#: bounds) represents exactly.
INT_MIN, INT_MAX = -(2**53), 2**53
DATETIME_PATTERN, DATE_PATTERN = codec.DATETIME_PATTERN, codec.DATE_PATTERN

_STR: dict[str, Any] = {"type": "string"}
_INT: dict[str, Any] = {"type": "integer", "minimum": INT_MIN, "maximum": INT_MAX}
_FLOAT: dict[str, Any] = {"type": "number"}
_BOOL: dict[str, Any] = {"type": "boolean"}
_TIME: dict[str, Any] = {
    "type": "object",
    "properties": {
        "$datetime": {"type": "string", "format": "date-time", "pattern": DATETIME_PATTERN}
    },
    "required": ["$datetime"],
    "additionalProperties": False,
}
_DATE_TEXT = {"type": "string", "format": "date", "pattern": DATE_PATTERN}
_BASE64 = r"^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
_DATE: dict[str, Any] = {
    "type": "object",
    "properties": {"$date": _DATE_TEXT},
    "required": ["$date"],
    "additionalProperties": False,
}
_BYTES: dict[str, Any] = {
    "type": "object",
    "properties": {"$bytes": {"type": "string", "contentEncoding": "base64", "pattern": _BASE64}},
    "required": ["$bytes"],
    "additionalProperties": False,
}
_OBJECT: dict[str, Any] = {"type": "object"}

#: JSON schema of each property type.
TYPES: dict[str, dict[str, Any]] = {
    "str": _STR,
    "int": _INT,
    "float": _FLOAT,
    "bool": _BOOL,
    "time": _TIME,
    "bytes": _BYTES,
    "strs": {"type": "array", "items": _STR},
    "floats": {"type": "array", "items": _FLOAT},
    "json": _OBJECT,
}
#: A property name Neo4j takes: not empty, no NUL (its TokenNameError otherwise).
NAME: dict[str, Any] = {"minLength": 1, "pattern": "^[^\\u0000]*$"}
#: A property of no known name: any graph value Neo4j stores.
ANY_VALUE: dict[str, Any] = {
    "anyOf": [
        _STR,
        _INT,
        _FLOAT,
        _BOOL,
        _TIME,
        _DATE,
        _BYTES,
        {"type": "array", "items": _STR},
        {"type": "array", "items": _FLOAT},
        {"type": "array", "items": _BOOL},
    ]
}

_MEMORY = {
    "text": "str", "role": "str", "speaker": "str", "kind": "str", "session_id": "str",
    "stage_id": "str", "status": "str", "content_hash": "str", "caption": "str",
    "consolidation_stage": "str", "token_format": "str", "archived_by": "str",
    "gate": "json", "metadata": "json", "tags": "strs",
    "heat": "float", "heat_current": "float", "heat_floor": "float", "importance": "float",
    "decay_rate": "float", "access_count": "int", "turn_index": "int", "chunk_count": "int",
    "restatements": "int", "event_time": "time", "ingested_at": "time", "last_access": "time",
    "heat_current_at": "time", "archived_at": "time", "last_restated": "time",
    "embedding": "floats", "token_vectors": "bytes",
}  # fmt: skip
#: Known node properties by label (the key, ``space`` and ``space_tag`` are the import's).
NODE_PROPS: dict[str, dict[str, str]] = {
    "Stage": {"name": "str", "kind": "str", "caption": "str", "ordinal": "int",
              "started_at": "time", "ended_at": "time", "created_at": "time",
              "embedding": "floats", "embedding_n": "int"},
    "Session": {"stage_id": "str", "caption": "str", "texts": "strs", "started_at": "time",
                "ended_at": "time", "created_at": "time"},
    "Memory": _MEMORY,
    "Chunk": {"memory_id": "str", "text": "str", "index": "int", "start": "int", "end": "int",
              "token_format": "str", "embedding": "floats", "token_vectors": "bytes"},
    "Entity": {"name": "str", "kind": "str", "caption": "str", "mention_count": "int",
               "memory_count": "int", "first_seen": "time", "last_seen": "time",
               "embedding": "floats", "embedding_n": "int"},
    "EntityCandidate": {"name": "str", "kind": "str", "memory": "str", "count": "int",
                        "sightings": "int", "seen": "time", "created_at": "time"},
    "Fact": {"text": "str", "category": "str", "speaker": "str", "role": "str", "status": "str",
             "rule": "str", "source_id": "str", "condition": "str", "confidence": "float",
             "negated": "bool", "change": "bool", "source_deleted": "bool",
             "event_time": "time", "created_at": "time", "embedding": "floats",
             "condition_embedding": "floats"},
    "Schema": {"stage_id": "str", "summary": "str", "caption": "str", "fingerprint": "str",
               "entities": "strs", "decisions": "strs", "outcomes": "strs",
               "open_questions": "strs", "highlights": "strs", "speakers": "strs",
               "memory_count": "int", "session_count": "int", "refreshed_at": "time",
               "embedding": "floats"},
    "Merge": {"canonical": "str", "duplicates": "strs", "status": "str", "reason": "str",
              "by": "str", "undone_by": "str", "similarities": "floats", "lexical": "floats",
              "prior_statuses": "strs", "at": "time", "undone_at": "time",
              "canonical_before": "json", "canonical_after": "json"},
}  # fmt: skip
#: Node properties every node of the label has, as reads expect them.
REQUIRED: dict[str, tuple[str, ...]] = {"Merge": ("canonical", "duplicates", "status")}
#: Values a property is limited to.
ENUMS: dict[tuple[str, str], tuple[str, ...]] = {("Merge", "status"): ("applied", "undone")}
#: Relationship properties every edge of the type has, as reads expect them.
REL_REQUIRED: dict[str, tuple[str, ...]] = {"SUPERSEDES": ("id",)}
#: Known relationship properties by type.
REL_PROPS: dict[str, dict[str, str]] = {
    "SUPERSEDES": {"id": "str", "kind": "str", "reason": "str", "by": "str", "rule": "str",
                   "attribute": "str", "old_value": "str", "new_value": "str",
                   "prior_status": "str", "newer_memory": "str", "older_memory": "str",
                   "fact_ids": "strs", "created_newer": "bool", "at": "time",
                   "valid_from": "time", "recorded_at": "time"},
    "CO_OCCURS": {"weight": "float", "count": "int"},
    "MENTIONS": {"count": "int"},
}  # fmt: skip
#: The space record's properties; ``settings`` is checked as a new space's.
SPACE_PROPS: dict[str, str] = {
    "name": "str", "description": "str", "caption": "str", "settings": "json",
    "created_at": "time", "merge_checked_until": "time", "supersede_reverted": "strs",
    "entity_graph_version": "int",
}  # fmt: skip
#: Server bookkeeping on a Space node, never exported nor imported.
SPACE_INTERNAL = frozenset({"erasing", "write_lock", "_lock", "_new"})
#: Properties stored as JSON text.
JSON_TEXT = frozenset({"gate", "metadata", "canonical_before", "canonical_after", "settings"})


def props_schema(
    known: Mapping[str, str],
    required: tuple[str, ...] = (),
    enums: Mapping[str, tuple[str, ...]] | None = None,
    settings: dict[str, Any] | None = None,
    extra: bool = True,
) -> dict[str, Any]:
    """The JSON schema of a record's ``props`` with these known properties."""
    properties: dict[str, Any] = {}
    for name, kind in known.items():
        schema = dict(TYPES[kind])
        if enums and name in enums:
            schema = {"type": "string", "enum": list(enums[name])}
        if name == "settings" and settings is not None:
            schema = settings
        properties[name] = schema
    out: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": ANY_VALUE if extra else False,
        "propertyNames": NAME,
    }
    if required:
        out["required"] = list(required)
    return out


def check_props(
    props: Any,
    known: Mapping[str, str],
    where: str,
    required: tuple[str, ...] = (),
    enums: Mapping[str, tuple[str, ...]] | None = None,
    settings: Callable[[dict[str, Any]], object] | None = None,
    extra: bool = True,
) -> dict[str, Any]:
    """``props`` checked against its schema and decoded to graph values (JSON objects as
    JSON text); an InvalidInput naming the property otherwise."""
    if props is None:
        props = {}
    if not isinstance(props, dict):
        raise InvalidInput(f"{where}: must be an object", field=where)
    for name in required:
        if props.get(name) is None:
            raise InvalidInput(f"{where}.{name}: required", field=f"{where}.{name}")
    out: dict[str, Any] = {}
    for name, value in props.items():
        field = f"{where}.{name}"
        if not name or "\x00" in name:
            raise InvalidInput(f"{field}: a property name is not empty, without NUL", field=field)
        kind = known.get(name)
        if kind is None and not extra:
            raise InvalidInput(f"{field}: not a property of this record", field=field)
        if value is None:  # Neo4j stores no nulls (an export never holds one)
            raise InvalidInput(f"{field}: must not be null", field=field)
        if kind is None:
            out[name] = _any_value(value, field)
            continue
        out[name] = _typed(value, kind, field)
        if enums and name in enums and out[name] not in enums[name]:
            raise InvalidInput(f"{field}: one of {list(enums[name])}", field=field)
        if name == "settings" and settings is not None:
            settings(value)
        if name in JSON_TEXT:
            out[name] = json.dumps(value, sort_keys=True)
    return out


def _fail(field: str, what: str) -> InvalidInput:
    return InvalidInput(f"{field}: must be {what}", field=field)


def _typed(value: Any, kind: str, field: str) -> Any:
    if kind == "str":
        if not isinstance(value, str):
            raise _fail(field, "a string")
        return value
    if kind == "int":
        return _int(value, field)
    if kind == "float":
        return _float(value, field)
    if kind == "bool":
        if not isinstance(value, bool):
            raise _fail(field, "a boolean")
        return value
    if kind in ("time", "bytes"):
        tag = "$datetime" if kind == "time" else "$bytes"
        if not (isinstance(value, dict) and set(value) == {tag} and isinstance(value[tag], str)):
            raise _fail(field, f'{{"{tag}": "..."}}')
        return codec.decode(value, field)
    if kind == "strs":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _fail(field, "a list of strings")
        return value
    if kind == "floats":
        if not isinstance(value, list):
            raise _fail(field, "a list of numbers")
        return [_float(v, field) for v in value]
    if kind == "json":
        if isinstance(value, str):  # an export written before these travelled as objects
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise _fail(field, "a JSON object") from exc
        if not isinstance(value, dict):
            raise _fail(field, "a JSON object")
        return value
    raise AssertionError(f"unknown property type {kind!r}")


def _int(value: Any, field: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not INT_MIN <= value <= INT_MAX:
        raise _fail(field, f"an integer from {INT_MIN} to {INT_MAX}")
    return value


def _float(value: Any, field: str) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _fail(field, "a number")
    try:
        out = float(value)
    except OverflowError as exc:
        raise _fail(field, "a number a float holds") from exc
    if not math.isfinite(out):
        raise _fail(field, "a finite number")
    return out


def _any_value(value: Any, field: str) -> Any:
    """A graph value of no known property: scalars, tagged times and bytes, or a list of
    strings, of numbers (all stored as floats unless all are integers) or of booleans."""
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int | float):
        return value if _is_int(value) else _float(value, field)
    if isinstance(value, dict):
        return codec.decode(value, field)
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value) or all(isinstance(v, bool) for v in value):
            return value
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            if all(_is_int(v) for v in value):  # one type per list, as Neo4j stores them
                return value
            return [_float(v, field) for v in value]
        raise _fail(field, "a list of strings, of numbers or of booleans")
    raise _fail(field, "a graph value")


def _is_int(value: Any) -> bool:
    """An integer Neo4j stores as one (a larger one is stored as a float)."""
    return isinstance(value, int) and not isinstance(value, bool) and INT_MIN <= value <= INT_MAX


def export_json(props: dict[str, Any]) -> dict[str, Any]:
    """Exported props with the JSON-text properties as JSON objects (what import takes)."""
    out = dict(props)
    for name in JSON_TEXT & set(out):
        raw = out[name]
        try:
            decoded = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            decoded = None
        if isinstance(decoded, dict):
            out[name] = decoded
        else:
            out.pop(name)  # not an object: nothing a read could use
    return out
