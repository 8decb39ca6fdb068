"""Memory spaces: the unit of isolation. Every node carries ``space``; every query filters on it."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from pipelines.errors import Conflict, NotFound
from pipelines.graph import GraphStore, Row, Tx

SPACE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$"
SpaceId = Annotated[str, Field(pattern=SPACE_ID_PATTERN)]
PURGE_BATCH = 5000
# In-memory GDS graphs are named "<prefix><space>/<version>" (see pipelines/consolidate).
PROJECTION_PREFIXES = ("mnemograph/entities/", "mnemograph/communities/")


def fulltext_tag(space: str) -> str:
    """The token that stands for ``space`` in the full-text index (``Memory.space_tag``).

    A full-text query is restricted to its space inside Lucene (``+space_tag:<tag>``) rather
    than post-filtered, so a big space cannot crowd a small one out of the top-N. Space ids
    contain separators that the analyzer would split, hence a hash: letters and digits only,
    one token. Isolation does not rest on it: every query still filters on ``space``.
    """
    return "sp" + hashlib.sha256(space.encode("utf-8")).hexdigest()[:24]


class NewSpace(BaseModel):
    """A space to create. Its ``settings`` are checked by :mod:`pipelines.space_settings`
    (each section against the configuration it overrides) before it is stored."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: SpaceId = Field(
        default_factory=lambda: f"space-{uuid.uuid4().hex[:12]}",
        description="Client-chosen id (1-64 chars: letters, digits, _ . -). Default: random.",
    )
    name: str | None = Field(None, max_length=200)
    description: str | None = Field(None, max_length=2000)
    settings: dict[str, Any] = Field(
        default_factory=dict, description="Per-space settings, e.g. {'gate': {'enabled': true}}."
    )


class SpacePatch(BaseModel):
    """Changes to a space. An absent field stays as it is; ``settings`` is a JSON merge patch
    (RFC 7396) over the stored settings: a key set to ``null`` is removed (so a section that
    no longer validates can always be dropped), an object is merged key by key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(None, min_length=1, max_length=200)
    description: str | None = Field(None, max_length=2000)
    settings: dict[str, Any] | None = Field(
        None, description="Merge patch over the settings, e.g. {'gate': {'enabled': false}}."
    )


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396: ``patch`` applied to ``target`` (neither is changed)."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def update(
    store: GraphStore,
    space: str,
    patch: SpacePatch,
    check_settings: Callable[[dict[str, Any]], object],
) -> dict[str, Any]:
    """Apply ``patch`` under the space's write lock: the new settings are the stored ones with
    the merge patch applied, checked by ``check_settings`` (an InvalidInput naming the field)
    before anything is written."""

    def work(tx: Tx) -> dict[str, Any]:
        lock_for_write(tx, space)
        rows = tx.run("spaces/get_for_update", space=space)
        if not rows:
            raise NotFound(f"space {space!r} does not exist", field="space")
        current = _decode(rows[0]["space"])
        settings = current["settings"]
        if patch.settings is not None:
            settings = merge_patch(settings, patch.settings)
            check_settings(settings)
        fields = patch.model_fields_set
        row = tx.run(
            "spaces/update",
            space=space,
            name=patch.name if "name" in fields and patch.name else current["name"],
            description=patch.description if "description" in fields else current["description"],
            settings=json.dumps(settings, sort_keys=True),
        )[0]
        return _decode(row["space"])

    return store.write_tx(work)


def _decode(space: dict[str, Any]) -> dict[str, Any]:
    out = dict(space)
    out["settings"] = json.loads(out["settings"]) if out.get("settings") else {}
    return out


def create(store: GraphStore, new: NewSpace) -> tuple[dict[str, Any], bool]:
    """Store ``new`` unless a space with its id exists; returns the space and whether it was
    created (an existing space is returned unchanged)."""
    row = store.write(
        "spaces/create",
        space=new.id,
        name=new.name or new.id,
        description=new.description,
        settings=json.dumps(new.settings, sort_keys=True),
    )[0]
    if row["erasing"]:
        raise Conflict(
            f"space {new.id!r} is still being erased; DELETE it again to finish, then create it",
            field="id",
        )
    return _decode(row["space"]), bool(row["created"])


def get(store: GraphStore, space: str) -> dict[str, Any]:
    rows = store.read("spaces/get", space=space)
    if not rows:
        raise NotFound(f"space {space!r} does not exist", field="space")
    return _decode(rows[0]["space"])


def require(store: GraphStore, space: str) -> None:
    """Raise NotFound (404) unless the space exists."""
    get(store, space)


def counts(store: GraphStore, space: str) -> dict[str, int]:
    return dict(store.read("spaces/counts", space=space)[0])


def list_spaces(
    store: GraphStore, allowed: frozenset[str] | None, skip: int = 0, limit: int = 100
) -> list[dict[str, Any]]:
    rows = store.read(
        "spaces/list",
        allowed=sorted(allowed) if allowed is not None else None,
        skip=skip,
        limit=limit,
    )
    return [_decode(r["space"]) for r in rows]


def write_locked(store: GraphStore, space: str, statement: str, /, **params: Any) -> list[Row]:
    """One named write statement into ``space`` in a transaction that first takes the space's
    write lock (:func:`lock_for_write`): it cannot interleave with an erasure, and a space
    erased meanwhile is a :class:`NotFound`, never written back into."""

    def work(tx: Tx) -> list[Row]:
        lock_for_write(tx, space)
        return tx.run(statement, space=space, **params)

    return store.write_tx(work)


def lock_for_write(tx: Tx, space: str, *, creating: bool = False) -> None:
    """Hold the space's write lock until ``tx`` ends (call it first in every transaction that
    adds to a space): writes into one space run one at a time, and none interleaves with its
    erasure. :class:`NotFound` when the space is being erased, or does not exist unless the
    caller creates it in ``tx`` (``creating``)."""
    if not tx.run("spaces/lock_for_write", space=space):
        if creating:
            return
        raise NotFound(f"space {space!r} does not exist", field="space")
    rows = tx.run("spaces/locked_state", space=space)
    if not rows or rows[0]["erasing"]:
        raise NotFound(f"space {space!r} does not exist", field="space")


def delete(store: GraphStore, space: str) -> dict[str, int]:
    """Erase everything in the space, in batches, and report what was deleted.

    The space is first marked as being erased under its write lock, so every write transaction
    into it has either committed before (and is purged here) or fails afterwards; then its nodes
    go in batches, then the Space node. An interrupted erasure is finished by the next call."""
    if not store.write("spaces/mark_erasing", space=space):
        raise NotFound(f"space {space!r} does not exist", field="space")
    before = counts(store, space)
    while store.write("spaces/purge_batch", space=space, batch=PURGE_BATCH)[0]["deleted"]:
        pass
    store.write("spaces/delete", space=space)
    store.write("spaces/drop_projections", prefixes=[f"{p}{space}/" for p in PROJECTION_PREFIXES])
    return before
