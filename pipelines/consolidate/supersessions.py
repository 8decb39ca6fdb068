"""Explicit supersession and the reads of every supersession (the job's and these).

**Correction** (:func:`supersede_memory`): any active memory can be superseded by another
memory or by new content (stored as a new memory of the same speaker), with a reason.

**Revert** (:func:`revert_supersession`) removes the edge and restores the exact prior status
of the older memory and of the facts it retired (unless another supersession still retires
them); the pair is remembered on the space so the job does not propose it again. A correction
memory that the supersession created from content is archived on revert.

The ``SUPERSEDES`` edge and its two times are described in
:mod:`pipelines.consolidate.supersede`.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from pipelines import spaces
from pipelines.consolidate.records import (
    SupersedeResult,
    Supersession,
    SupersessionDetail,
    SupersessionReverted,
    TimelineEdge,
    TimelineEntry,
)
from pipelines.engine import Engine
from pipelines.errors import Conflict, NotFound
from pipelines.fields import NotBlank, Timestamp
from pipelines.graph import as_utc
from pipelines.ingest.service import IngestOptions, Ingestor, MemoryIn, Role

R = TypeVar("R", bound=BaseModel)
log = logging.getLogger(__name__)


class SupersedeRequest(BaseModel):
    """An explicit correction: the memory that replaces one, or new content to store as it."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        json_schema_extra={
            "oneOf": [
                {"required": [a], "properties": {a: {"type": "string"}, b: {"type": "null"}}}
                for a, b in (("content", "by_memory_id"), ("by_memory_id", "content"))
            ]
        },
    )

    content: NotBlank | None = Field(
        None,
        max_length=20_000,
        description="New content, stored as a new memory that replaces "
        "this one (same speaker and role unless given).",
    )
    by_memory_id: str | None = Field(
        None, description="The memory that replaces this one.", validate_default=True
    )
    reason: NotBlank = Field(min_length=1, max_length=2_000)
    speaker: str | None = Field(None, max_length=200)
    role: Role | None = None
    valid_from: Timestamp | None = Field(
        None,
        description="When the replacement became true (valid time; default: the newer "
        "memory's event time). With content, also the new memory's event time.",
    )

    @field_validator("by_memory_id")
    @classmethod
    def _exactly_one(cls, value: str | None, info: ValidationInfo) -> str | None:
        if "content" in info.data and (value is None) == (info.data["content"] is None):
            raise ValueError("give exactly one of by_memory_id and content")
        return value


def supersede_memory(
    engine: Engine,
    ingestor: Ingestor,
    space: str,
    memory_id: str,
    request: SupersedeRequest,
    by: str = "api",
) -> SupersedeResult:
    """Supersede an active memory by another memory or by new content, stored as a memory
    through ``ingestor``.

    Errors: 404 unknown space/memory; 409 a memory superseding itself (``by_memory_id``, or
    ``content`` that is the memory's own), when the memory is not active, the newer one is
    not active, or the edge would close a cycle.
    """
    spaces.require(engine.store, space)
    old = _brief(engine, space, memory_id, "memory_id")
    _require_active(old, memory_id)
    created = False
    by_memory_id = request.by_memory_id
    if request.content is not None:
        by_memory_id, created = _store_correction(ingestor, space, memory_id, old, request)
    assert by_memory_id is not None  # the request names it or gives content
    _require_newer(engine, space, memory_id, by_memory_id, request.content is not None)
    sid = f"sup-{uuid.uuid4().hex[:16]}"
    rows = spaces.write_locked(
        engine.store,
        space,
        "consolidate/supersede_memory",
        id=sid,
        older=memory_id,
        newer=by_memory_id,
        newer_statuses=["active"],
        reason=request.reason,
        now=datetime.now(UTC),
        by=by,
        rule="explicit",
        attribute=None,
        old_value=None,
        new_value=None,
        valid_from=as_utc(request.valid_from),
        created_newer=created,
    )
    if not rows:
        raise Conflict(
            f"cannot supersede {memory_id!r} by {by_memory_id!r}: one of them changed meanwhile, "
            "or the newer memory is already older than it in a supersession chain",
            field="by_memory_id",
        )
    return SupersedeResult(
        id=sid,
        older=memory_id,
        newer=by_memory_id,
        created_memory=by_memory_id if created else None,
        reason=request.reason,
        fact_ids=rows[0]["fact_ids"],
        valid_from=rows[0]["valid_from"],
        recorded_at=rows[0]["recorded_at"],
    )


def _require_active(old: Mapping[str, Any], memory_id: str) -> None:
    """409 for a memory that is not active, naming what retired it."""
    if old["status"] == "active":
        return
    detail = ""
    if old["superseded_by"]:
        detail = f" (superseded by {', '.join(old['superseded_by'])})"
    elif old["merged_into"]:
        detail = f" (merged into {', '.join(old['merged_into'])})"
    raise Conflict(
        f"memory {memory_id!r} is {old['status']}{detail}; only active memories can be superseded",
        field="memory_id",
    )


def _require_newer(
    engine: Engine, space: str, memory_id: str, by_memory_id: str, from_content: bool
) -> None:
    """409 for a memory superseding itself (``from_content``: the content is stored as that
    memory already), 404 for an unknown newer one, 409 for one that is not active."""
    if by_memory_id == memory_id:
        what = "the content is this memory's own" if from_content else "the two ids are one"
        raise Conflict(
            f"a memory cannot supersede itself: {what}",
            field="content" if from_content else "by_memory_id",
        )
    new = _brief(engine, space, by_memory_id, "by_memory_id")
    if new["status"] != "active":
        raise Conflict(
            f"memory {by_memory_id!r} is {new['status']}; the newer memory must be active",
            field="by_memory_id",
        )


def _store_correction(
    ingestor: Ingestor,
    space: str,
    memory_id: str,
    old: Mapping[str, Any],
    request: SupersedeRequest,
) -> tuple[str, bool]:
    """Store ``request.content`` as a note of the old memory's speaker and role (unless the
    request names others); returns its id and whether it is new."""
    assert request.content is not None
    result = ingestor.add_memories(
        space,
        [
            MemoryIn(
                content=request.content,
                kind="note",
                role=request.role or old["role"] or "note",
                speaker=request.speaker if request.speaker is not None else old["speaker"],
                tags=["correction"],
                time=request.valid_from,
                metadata={"supersedes": memory_id, "reason": request.reason},
            )
        ],
        IngestOptions(force=True),
    )
    item = result.items[0]
    return item.id, item.decision == "stored"


def _brief(engine: Engine, space: str, memory_id: str, fld: str) -> dict[str, Any]:
    rows = engine.store.read("consolidate/memory_brief", space=space, id=memory_id)
    if not rows:
        raise NotFound(f"memory {memory_id!r} does not exist in space {space!r}", field=fld)
    return rows[0]


def get_supersession(engine: Engine, space: str, supersession_id: str) -> SupersessionDetail:
    rows = engine.store.read("consolidate/supersession_get", space=space, id=supersession_id)
    if not rows:
        spaces.require(engine.store, space)
        raise NotFound(
            f"supersession {supersession_id!r} does not exist in space {space!r}", field="id"
        )
    r = rows[0]
    return SupersessionDetail.model_validate(
        {**r["supersession"], "newer": r["newer"], "older": r["older"]}
    )


def revert_supersession(engine: Engine, space: str, supersession_id: str) -> SupersessionReverted:
    """Undo one supersession (see the module docstring)."""
    sup = get_supersession(engine, space, supersession_id)
    rows = spaces.write_locked(
        engine.store, space, "consolidate/supersession_revert", id=supersession_id
    )
    if not rows:
        raise Conflict(f"supersession {supersession_id!r} was reverted meanwhile", field="id")
    r = rows[0]
    return SupersessionReverted(
        id=supersession_id,
        reverted=True,
        older=sup.older,
        newer=sup.newer,
        older_status=r["status"],
        facts_restored=r["facts"],
        archived_created_memory=sup.newer if r["created"] else None,
        valid_from=sup.valid_from,
        recorded_at=sup.recorded_at,
    )


def list_supersessions(
    engine: Engine, space: str, by: str | None = None, skip: int = 0, limit: int = 50
) -> list[Supersession]:
    spaces.require(engine.store, space)
    rows = engine.store.read(
        "consolidate/supersession_list", space=space, by=by, skip=skip, limit=limit
    )
    found = (
        _readable(Supersession, {**r["supersession"], "newer": r["newer"], "older": r["older"]})
        for r in rows
    )
    return [s for s in found if s is not None]


def memory_timeline(engine: Engine, space: str, memory_id: str) -> list[TimelineEntry]:
    """The supersession chain around a memory, oldest first (each with its outgoing edges)."""
    rows = engine.store.read("consolidate/memory_timeline", space=space, id=memory_id)
    if not rows:
        spaces.require(engine.store, space)
        raise NotFound(f"memory {memory_id!r} does not exist in space {space!r}", field="id")
    out = []
    for r in rows:
        edges = [_readable(TimelineEdge, s) for s in r["supersedes"] if s]
        good = [e.model_dump() for e in edges if e is not None]
        entry = _readable(TimelineEntry, {**r["memory"], "supersedes": good})
        if entry is not None:
            out.append(entry)
    return out


def _readable(model: type[R], stored: dict[str, Any]) -> R | None:
    """A stored supersession (or timeline row) as ``model``; ``None`` with a warning for one
    too malformed to read (only a database edited by hand holds one): never a 422 for a read."""
    try:
        return model.model_validate({k: v for k, v in stored.items() if v is not None})
    except ValidationError:
        log.warning("supersession %r is malformed in the store; left out", stored.get("id"))
        return None
