"""Graph property values as JSON and back, exactly: times keep their nanoseconds and offset,
bytes travel as base64. Anything else the graph holds (strings, numbers, booleans, lists of
them) is JSON already."""

from __future__ import annotations

import base64
from typing import Any

import neo4j.time

from pipelines.errors import InvalidInput


def encode(value: Any) -> Any:
    if isinstance(value, neo4j.time.DateTime):
        return {"$datetime": value.iso_format()}
    if isinstance(value, neo4j.time.Date):
        return {"$date": value.iso_format()}
    if isinstance(value, bytes | bytearray):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    raise TypeError(f"cannot export a property of type {type(value).__name__}")


def decode(value: Any, where: str) -> Any:
    if isinstance(value, list):
        return [decode(v, where) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) != 1:
        raise InvalidInput(f"{where}: a property value cannot be an object", field=where)
    tag, raw = next(iter(value.items()))
    try:
        if tag == "$datetime":
            return neo4j.time.DateTime.from_iso_format(raw)
        if tag == "$date":
            return neo4j.time.Date.from_iso_format(raw)
        if tag == "$bytes":
            return base64.b64decode(raw, validate=True)
    except (ValueError, TypeError) as exc:
        raise InvalidInput(f"{where}: bad {tag} value: {exc}", field=where) from exc
    raise InvalidInput(f"{where}: unknown value tag {tag!r}", field=where)


def encode_props(props: dict[str, Any]) -> dict[str, Any]:
    return {k: encode(v) for k, v in sorted(props.items())}


def decode_props(props: dict[str, Any], where: str) -> dict[str, Any]:
    return {k: decode(v, f"{where}.{k}") for k, v in props.items()}
