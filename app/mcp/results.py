"""The compact results the MCP tools return, built the same way whichever backend answered
(the app's services or a server through the SDK)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

Json = dict[str, Any]


class Backend(Protocol):
    """What the tools call (:mod:`app.mcp.backend` has the two implementations)."""

    async def list_spaces(self, allowed: frozenset[str] | None) -> list[Json]: ...
    async def add_session(self, space: str, session: Json) -> Json: ...
    async def add_memories(self, space: str, memories: list[Json]) -> Json: ...
    async def recall(self, space: str, query: str, k: int) -> Json: ...
    async def context(self, space: str, query: str, context_window: int) -> Json: ...
    async def forget(self, space: str, memory_id: str) -> Json: ...
    async def correct(self, space: str, memory_id: str, content: str, reason: str) -> Json: ...


def compact(value: Any) -> Any:
    """``value`` without the ``None`` entries of its objects (they tell a model nothing)."""
    if isinstance(value, dict):
        return {k: compact(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [compact(v) for v in value]
    return value


def as_text(value: Any) -> str:
    """Compact JSON: no indentation, no spaces after separators, no nulls, text as is."""
    return json.dumps(compact(value), separators=(",", ":"), ensure_ascii=False, default=str)


#: The phases of a context whose candidates are recalled memories (stage summaries are not).
MEMORY_PHASES = ("current_stage", "related_prior", "recalled")


def context_result(prompt: str, included_ids: Mapping[str, list[str]], report: Json) -> Json:
    """What a model needs of a ``/context`` response: the prompt; the ids of the memories in
    it, per section; how many recalled memories each section left out (ranked candidates that
    did not make it into the prompt); the stage used and how it was found; the mode, tokens
    and any warning. The full report stays with ``/context``."""
    phases: Json = report.get("phases") or {}
    left_out: dict[str, int] = {}
    for name in MEMORY_PHASES:
        phase = phases.get(name)
        if phase:
            ranked = int(phase.get("selected", 0)) + int(phase.get("dropped", 0))
            left_out[name] = max(0, ranked - int(phase.get("included", 0)))
    stage = report.get("stage")
    summaries = phases.get("stage_summaries") or {}
    return {
        "prompt": prompt,
        "included_ids": {k: list(v) for k, v in included_ids.items() if v},
        "included": sum(len(v) for v in included_ids.values()),
        "left_out": left_out,
        "left_out_total": sum(left_out.values()),
        "mode": report.get("mode"),
        "stage": None if not stage else {k: stage.get(k) for k in ("id", "name", "how", "used")},
        "summarised_stages": list(summaries.get("included_stages") or []),
        "tokens": report.get("total_tokens"),
        "warning": report.get("warning"),
    }
