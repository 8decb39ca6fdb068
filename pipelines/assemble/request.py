"""What a caller may ask of context assembly, validated once.

:class:`ContextRequest` is both the ``/context`` body and the domain request: pydantic checks
every rule when it is built, and each refusal names its field (``query``, ``split``,
``template.0.condenser``, ...).  The benchmark's variants (forced flat mode, ablations) are
presets (:mod:`pipelines.assemble.presets`), never part of a request.

One assembly's inputs and the services it reads through, handed to every step and helper.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from pipelines.assemble.config import AssemblyConfig, shares, split_schema
from pipelines.engine import Engine
from pipelines.errors import InvalidInput
from pipelines.fields import NOT_BLANK_PATTERN, Timestamp, integral, is_blank
from pipelines.graph import GraphStore, Row
from pipelines.models.memo import MemoEmbedder
from pipelines.prompt.condensers import CONDENSERS
from pipelines.prompt.tokens import TokenEstimator
from pipelines.recall.request import MAX_QUERY_CHARS
from pipelines.recall.service import Recaller
from pipelines.tracing import Laps

__all__ = [
    "FACTS_SECTION",
    "FLAT_SECTION",
    "MAX_CONTEXT_WINDOW",
    "MIN_CONTEXT_WINDOW",
    "QUERY_SLOT",
    "RESERVED_SLOTS",
    "SECTION_KEYS",
    "Clock",
    "ContextRequest",
    "DensityCache",
    "Run",
    "TemplateSlot",
]


SECTION_KEYS: tuple[str, str, str] = ("current_stage", "related_prior", "stage_summaries")
"""Response section names, in phase order."""


FLAT_SECTION = "recalled"
"""The single section of the flat-recall mode."""


FACTS_SECTION = "facts"
"""The compact tier of either mode: atomic facts, before the other sections
(:mod:`pipelines.assemble.facts`)."""


QUERY_SLOT = "QUERY"


RESERVED_SLOTS = frozenset(
    {*(key.upper() for key in (*SECTION_KEYS, FLAT_SECTION, FACTS_SECTION)), QUERY_SLOT}
)
"""Template slot keys the assembler fills itself (compared case-insensitively)."""


MIN_CONTEXT_WINDOW = 256
"""Smallest reader-model window /context accepts (tokens)."""


MAX_CONTEXT_WINDOW = 2_000_000
"""Largest reader-model window /context accepts (tokens)."""


_MAX_QUERY_CHARS = MAX_QUERY_CHARS


def _invalid(message: str) -> PydanticCustomError:
    """A refusal whose message is ``message`` as it stands (the field is its location)."""
    return PydanticCustomError("invalid_value", message)


#: Template slot priorities lie within +-this.
MAX_PRIORITY = 1000


class TemplateSlot(BaseModel):
    """A caller-supplied prompt section (system prompt, recent messages, ...), placed before
    the context in the order given.  Trusted text: it is not escaped."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_]+$",
        description="Slot name: ASCII letters, digits, '_'. Shown in the truncation banner.",
    )
    content: str = Field(description="Trusted text of the slot (system prompt, recent turns).")
    priority: int = Field(
        strict=True,
        ge=-MAX_PRIORITY,
        le=MAX_PRIORITY,
        description="Lower = more important = condensed last. The query has 0, the context "
        "sections 1 (current stage), 2 (related prior context), 3 (stage summaries).",
    )
    condenser: str | None = Field(
        None,
        description="user_message, assistant_message, entity_triples, timeline, "
        "code_signatures, memory_blocks or truncate; default: chosen by content shape.",
        json_schema_extra={"enum": [*sorted(CONDENSERS), None]},
    )

    @field_validator("priority", mode="before")
    @classmethod
    def _integral(cls, value: object) -> object:
        return integral(value)

    @field_validator("key")
    @classmethod
    def _not_reserved(cls, key: str) -> str:
        if key.upper() in RESERVED_SLOTS:
            raise _invalid(f"template slot key {key!r} is reserved ({sorted(RESERVED_SLOTS)})")
        return key

    @field_validator("condenser")
    @classmethod
    def _known_condenser(cls, name: str | None) -> str | None:
        if name is not None and name not in CONDENSERS:
            raise _invalid(f"unknown condenser {name!r}; known: {sorted(CONDENSERS)}")
        return name


class ContextRequest(BaseModel):
    """One ``/context`` call: the query, the reader model's window and how to scope it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    query: str = Field(
        description=f"The agent's next question or task (not blank, at most {_MAX_QUERY_CHARS} "
        "characters).",
        json_schema_extra={
            "minLength": 1,
            "maxLength": _MAX_QUERY_CHARS,
            "pattern": NOT_BLANK_PATTERN,
        },
    )
    context_window: int = Field(
        strict=True,
        description=f"Tokens of the reader model's window ({MIN_CONTEXT_WINDOW} to "
        f"{MAX_CONTEXT_WINDOW}).",
        json_schema_extra={"minimum": MIN_CONTEXT_WINDOW, "maximum": MAX_CONTEXT_WINDOW},
    )
    headroom: float = Field(
        0.75,
        strict=True,
        gt=0.0,
        le=1.0,
        allow_inf_nan=False,
        description="Share of the window the prompt may use; the rest is left for the answer.",
    )
    split: tuple[float, float, float] = Field(
        (0.6, 0.3, 0.1),
        description="Budget shares of (current stage, related prior context, stage summaries): "
        "non-negative, one at least positive, read as fractions of their sum.",
        json_schema_extra=split_schema,
    )
    stage: str | None = Field(None, description="The agent's current stage (id, label or name).")
    session: str | None = Field(None, description="The agent's current session (its stage).")
    template: list[TemplateSlot] | None = Field(
        None, description="Extra prompt slots, placed before the context in the order given."
    )
    as_of: Timestamp | None = Field(
        None,
        description="Valid time: assemble the context as it was true then (memories whose "
        "event time is at or before it, without the versions superseded by then).",
    )
    known_at: Timestamp | None = Field(
        None,
        description="Recorded time: assemble the context from what the server knew then "
        "(memories stored by then, supersessions recorded by then). Combines with as_of.",
    )
    now: Timestamp | None = Field(
        None, description="Question time (default: as_of, else known_at, else now)."
    )
    include_superseded: bool = Field(False, strict=True)
    explain: bool = Field(
        False, strict=True, description="Per-item scores and stage-inference evidence."
    )

    @field_validator("context_window", mode="before")
    @classmethod
    def _integral(cls, value: object) -> object:
        return integral(value)

    @field_validator("query")
    @classmethod
    def _query_text(cls, query: str) -> str:
        if is_blank(query):
            raise _invalid("query must not be empty")
        if len(query) > _MAX_QUERY_CHARS:
            raise _invalid(f"query is longer than {_MAX_QUERY_CHARS} characters")
        return query

    @field_validator("context_window")
    @classmethod
    def _window_in_range(cls, window: int) -> int:
        if not MIN_CONTEXT_WINDOW <= window <= MAX_CONTEXT_WINDOW:
            raise _invalid(
                f"context_window must be between {MIN_CONTEXT_WINDOW} and {MAX_CONTEXT_WINDOW} "
                f"tokens, got {window}"
            )
        return window

    @field_validator("split", mode="before")
    @classmethod
    def _three_shares(cls, split: Any) -> Any:
        parts = list(split) if isinstance(split, list | tuple) else None
        if parts is None or not all(
            isinstance(p, int | float) and not isinstance(p, bool) for p in parts
        ):
            raise _invalid(f"split must be three non-negative shares, got {split!r}")
        try:
            return shares(parts)
        except ValueError as exc:
            raise _invalid(f"{exc}, got {split!r}") from exc

    @field_validator("template")
    @classmethod
    def _distinct_keys(cls, slots: list[TemplateSlot] | None) -> list[TemplateSlot] | None:
        # The one cross-item rule: raised as the domain error so the field names the slot.
        seen: set[str] = set()
        for i, slot in enumerate(slots or []):
            if slot.key.upper() in seen:
                raise InvalidInput(
                    f"template slot key {slot.key!r} is repeated", field=f"template.{i}.key"
                )
            seen.add(slot.key.upper())
        return slots

    @property
    def slots(self) -> list[TemplateSlot]:
        """The caller's template slots (none: an empty list)."""
        return list(self.template or [])


class Clock:
    """Milliseconds per step (``report.timings_ms``), and with tracing on a span per step
    (``assemble.<step>``, current while the step runs): every step is timed, so every step
    is traced."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.timings: dict[str, float] = {}
        self.spans = Laps("assemble.")

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = round((now - self.last) * 1000.0, 2)
        self.last = now
        self.spans.lap(name)

    def total(self) -> dict[str, float]:
        self.timings["total"] = round((time.perf_counter() - self.start) * 1000.0, 2)
        self.spans.close("report")
        return self.timings


@dataclass(frozen=True)
class Run:
    """The request, the space's configuration, and the services of one assembly.

    ``recaller`` embeds through ``embedder`` (the assembler's memo), so a query embedded
    ahead of a recall is not embedded again; ``read_ahead`` runs the reads that need nothing
    from the step before them beside the recalls (tasks never submit tasks)."""

    space: str
    request: ContextRequest
    config: AssemblyConfig
    est: TokenEstimator
    as_of: datetime | None  # valid time
    now: datetime | None
    clock: Clock
    engine: Engine
    recaller: Recaller
    embedder: MemoEmbedder
    read_ahead: Executor
    density: DensityCache
    known_at: datetime | None = None  # recorded time

    @property
    def store(self) -> GraphStore:
        return self.engine.store

    @property
    def explain(self) -> bool:
        return self.request.explain

    @property
    def time_travel(self) -> bool:
        """Whether the context is assembled at another time: ``as_of`` (valid time) or
        ``known_at`` (recorded time)."""
        return self.as_of is not None or self.known_at is not None

    @property
    def with_superseded(self) -> bool:
        """Whether reads include superseded memories: asked for, or needed to see the space
        as it was at ``as_of`` / ``known_at`` (the validity check then keeps what was valid)."""
        return self.request.include_superseded or self.time_travel


class DensityCache:
    """A space's memory and stage counts for the density gate, reused for ``ttl_s`` seconds
    (never with ``as_of``: those counts depend on the moment); at most ``size`` entries,
    least recently used dropped first.  Thread-safe."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str, tuple[str, ...]], tuple[float, Row]] = OrderedDict()
        self._lock = threading.Lock()

    def counts(
        self,
        store: GraphStore,
        space: str,
        statuses: Sequence[str],
        as_of: datetime | None,
        ttl_s: float,
    ) -> Row:
        key = (space, tuple(statuses))
        now = time.monotonic()
        cacheable = as_of is None and ttl_s > 0
        if cacheable:
            with self._lock:
                hit = self._entries.get(key)
                if hit is not None:
                    self._entries.move_to_end(key)
            if hit is not None and hit[0] > now:
                return hit[1]
        row = store.read("assemble/density", space=space, statuses=list(statuses), as_of=as_of)[0]
        if cacheable:
            with self._lock:
                self._entries[key] = (now + ttl_s, row)
                self._entries.move_to_end(key)
                while len(self._entries) > self.size:
                    self._entries.popitem(last=False)
        return row
