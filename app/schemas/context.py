"""Request/response models of ``POST /v1/spaces/{space}/context`` (stage-aware assembly).

Types are checked here; ranges and cross-field rules (window bounds, split summing to 1, known
condensers, reserved slot keys) are checked by the assembler, which names the field in its 422.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.schemas.common import StrictModel


class TemplateSlotIn(StrictModel):
    key: str = Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_]+$",
        description="Slot name: letters, digits, '_'. Shown in the truncation banner.",
    )
    content: str = Field(description="Trusted text of the slot (system prompt, recent turns).")
    priority: int = Field(
        description="Lower = more important = condensed last. The query has 0, the context "
        "sections 1 (current stage), 2 (related prior context), 3 (stage summaries)."
    )
    condenser: str | None = Field(
        None,
        description="user_message, assistant_message, entity_triples, timeline, "
        "code_signatures, memory_blocks or truncate; default: chosen by content shape.",
    )


class ContextBody(StrictModel):
    query: str = Field(min_length=1, description="The agent's next question or task.")
    context_window: int = Field(description="Tokens of the reader model's window.")
    headroom: float = Field(0.75, description="Share of the window the prompt may use.")
    split: list[float] = Field(
        default_factory=lambda: [0.6, 0.3, 0.1],
        description="Budget shares of (current stage, related prior context, stage summaries); "
        "sums to 1.",
    )
    stage: str | None = Field(None, description="The agent's current stage (id, label or name).")
    session: str | None = Field(None, description="The agent's current session (its stage).")
    template: list[TemplateSlotIn] | None = Field(
        None, description="Extra prompt slots, placed before the context in the order given."
    )
    as_of: datetime | None = Field(None, description="Assemble the context as it was then.")
    now: datetime | None = Field(None, description="Question time (default: as_of, or now).")
    include_superseded: bool = False
    explain: bool = Field(False, description="Per-item scores and stage-inference evidence.")
    flat: bool = Field(False, description="Force the flat-recall baseline.")
    ablate: list[Literal["selection", "ppr", "summaries"]] = Field(
        default_factory=list, description="Switch phases off (ablation studies)."
    )


class ContextOut(BaseModel):
    sections: dict[str, str]
    prompt: str
    report: dict[str, Any]
    included_ids: dict[str, list[str]]
