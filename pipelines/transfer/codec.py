"""Graph property values as JSON and back, exactly: times keep their nanoseconds and offset,
bytes travel as base64. Anything else the graph holds (strings, numbers, booleans, lists of
them) is JSON already."""

from __future__ import annotations

import base64
import re
from datetime import date, datetime
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


#: What an export writes (and an import takes): ``T`` and ``Z`` upper case, an offset always,
#: within Neo4j's +-18:00 (a larger one fails the Bolt message itself, a ClientError).
DATETIME_PATTERN = (
    r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-](0\d|1[0-7]):[0-5]\d|[+-]18:00)$"
)
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
_DATETIME, _DATE = re.compile(DATETIME_PATTERN), re.compile(DATE_PATTERN)


def _seconds(text: str) -> str:
    """``text`` with its fraction cut to microseconds (what Python parses)."""
    return re.sub(r"(\.\d{6})\d+", r"\1", text)


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
            if not isinstance(raw, str) or not _DATETIME.match(raw):
                raise ValueError("not an ISO 8601 date-time with an offset")
            datetime.fromisoformat(_seconds(raw))  # a real calendar date and time
            return neo4j.time.DateTime.from_iso_format(raw)
        if tag == "$date":
            if not isinstance(raw, str) or not _DATE.match(raw):
                raise ValueError("not an ISO 8601 date")
            date.fromisoformat(raw)
            return neo4j.time.Date.from_iso_format(raw)
        if tag == "$bytes":
            return base64.b64decode(raw, validate=True)
    except Exception as exc:  # whatever the parsers raise, a bad value is the caller's
        raise InvalidInput(f"{where}: bad {tag} value: {exc}", field=where) from exc
    raise InvalidInput(f"{where}: unknown value tag {tag!r}", field=where)


def encode_props(props: dict[str, Any]) -> dict[str, Any]:
    return {k: encode(v) for k, v in sorted(props.items())}


def decode_props(props: dict[str, Any], where: str) -> dict[str, Any]:
    return {k: decode(v, f"{where}.{k}") for k, v in props.items()}
