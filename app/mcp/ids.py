"""Deterministic ids for what ``remember`` stores, so a retried call stores nothing twice
(the write path answers ``unchanged`` for an id already stored with the same content)."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def _digest(*parts: Any) -> str:
    text = json.dumps(parts, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def note_id(space: str, session_id: str | None, content: str, time: str | None) -> str:
    """A note's id: the same space, session, content and time give the same id."""
    return f"mcp-{_digest('note', space, session_id, content, time)}"


def session_id(space: str, turns: list[dict[str, Any]]) -> str:
    """The session of messages given without one: derived from the messages themselves."""
    return f"mcp-{_digest('session', space, turns)}"


def turn_ids(space: str, session: str, turns: list[dict[str, Any]]) -> list[str]:
    """One id per message from its session, role, speaker, content and time (and how often
    the same message came before in the call), not from its position: later calls may add
    messages to the same session without colliding with the ids of earlier ones."""
    seen: dict[str, int] = {}
    ids = []
    for turn in turns:
        key = _digest(space, session, turn.get("role"), turn.get("speaker"),
                      turn["content"], turn.get("time"))  # fmt: skip
        n = seen.get(key, 0)
        seen[key] = n + 1
        ids.append(f"{session[:150]}#{key[:16]}" + (f".{n}" if n else ""))
    return ids
