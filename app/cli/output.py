"""How the CLI prints: aligned tables for people, JSON for scripts (``--json``). Human output
shows control and bidi characters escaped (:func:`safe`): stored text never drives the
terminal (ESC sequences, BEL, a right-to-left override); JSON escapes them itself."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

MAX_CELL = 80

#: C0 controls but tab and newline, DEL, C1 controls, bidi embeddings/overrides and isolates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: str) -> str:
    """``text`` with every control and bidi character shown as its escape (``\\x1b``,
    ``\\u202e``); newlines and tabs stay."""
    return _UNSAFE.sub(_escape, text)


def plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def emit_json(value: Any) -> None:
    """JSON, with C1 controls and bidi characters written as ``\\uXXXX`` like the C0 ones
    (the same values once parsed; only inside strings can they occur)."""
    text = json.dumps(plain(value), indent=2, ensure_ascii=False, default=str)
    print(_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def _cell(value: Any) -> str:
    text = (
        ""
        if value is None
        else (json.dumps(value) if isinstance(value, dict | list) else str(value))
    )
    text = " ".join(safe(text).split())
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(line.rstrip() for line in lines)


def show(value: Any, as_json: bool, columns: Sequence[str] | None = None) -> None:
    """``value`` as JSON, or as a table (a list) / key-value lines (one object)."""
    data = plain(value)
    if as_json:
        emit_json(data)
    elif isinstance(data, list):
        print(table(data, columns or (list(data[0]) if data else [])) if data else "(none)")
    elif isinstance(data, dict):
        width = max((len(k) for k in data), default=0)
        for key, val in data.items():
            print(f"{safe(key).rjust(width)}  {_cell(val)}")
    else:
        print(safe(str(data)))
