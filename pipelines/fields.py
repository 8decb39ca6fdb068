"""Field types and coercions shared by the request models at the edges: an ``integer`` and a
``date-time`` mean what the OpenAPI document says they mean."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field


def integral(value: object) -> object:
    """JSON Schema's ``integer`` includes ``34.0``: a float without a fraction is that integer
    (strict fields still refuse booleans, strings and ``34.5``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _not_a_number(value: object) -> object:
    """A time is an ISO 8601 string (as the schema says), not a number of seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError("a time is an ISO 8601 string, not a number")
    return value


#: A ``datetime`` field that takes what the OpenAPI document's ``date-time`` string allows.
Timestamp = Annotated[datetime, BeforeValidator(_not_a_number)]


#: Whitespace as every engine that reads the document's patterns has it, united: Python's
#: ``str.isspace`` (and ``re``'s ``\s``), Unicode White_Space (Rust's ``regex``) and ECMA-262's
#: WhiteSpace and LineTerminator (what an OpenAPI ``pattern`` means). The engines disagree on
#: ``\s`` (U+001C..U+001F, U+0085, U+FEFF), so the patterns spell the set out instead.
_WHITESPACE_RANGES = (
    (0x09, 0x0D),
    (0x1C, 0x20),
    (0x85, 0x85),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
)
WHITESPACE = frozenset(chr(c) for lo, hi in _WHITESPACE_RANGES for c in range(lo, hi + 1))
#: The set as a character-class body of ``\uXXXX`` escapes (read alike by ECMA-262, Python and
#: Rust regular expressions).
_WS_CLASS = "".join(
    f"\\u{lo:04x}" if lo == hi else f"\\u{lo:04x}-\\u{hi:04x}" for lo, hi in _WHITESPACE_RANGES
)
#: "Not blank": a character outside :data:`WHITESPACE` (then anything to the end: the same
#: strings as the class alone, in a form schemathesis can draw at a maxLength of millions).
NOT_BLANK_PATTERN = f"[^{_WS_CLASS}][\\s\\S]*$"
#: An id: no ``/``, and neither starts nor ends with whitespace.
ID_PATTERN = f"^[^/{_WS_CLASS}]([^/]*[^/{_WS_CLASS}])?$"


def is_blank(text: str) -> bool:
    """Empty or whitespace only, by :data:`WHITESPACE` (what ``NOT_BLANK_PATTERN`` refuses)."""
    return all(ch in WHITESPACE for ch in text)


def not_blank(value: str) -> str:
    """A validator: refuse a blank string (the field's schema has ``NOT_BLANK_PATTERN``)."""
    if is_blank(value):
        raise ValueError("must not be empty or only whitespace")
    return value


#: A string field that must not be blank, with the pattern in its schema.
NotBlank = Annotated[
    str, AfterValidator(not_blank), Field(json_schema_extra={"pattern": NOT_BLANK_PATTERN})
]
