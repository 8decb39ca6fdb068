"""Step ``touch``: records an access of each result (its raised heat) in the engine's access
log, which writes it later, off the request path (never for a request with ``touch=False``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from pipelines.access_log import Access
from pipelines.recall.config import HeatConfig
from pipelines.recall.heat import touch
from pipelines.recall.state import Candidate, Explanations, RecallState
from pipelines.recall.steps.base import RecallStep, StepContext


class Touch(RecallStep):
    kind: Literal["touch"] = "touch"
    requires = ("fuse",)
    after = ("select", "order", "abstain")

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return state.request.touch and bool(state.final_ids())

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        if ctx.access is None:
            return None
        now = datetime.now(UTC)
        ids = state.final_ids()
        rows = touch_rows(ids, state.pool, now, ctx.config.heat, ctx.access.pending(ctx.space, ids))
        ctx.access.record(ctx.space, [(r["id"], r["heat"]) for r in rows], now)
        return None


def touch_rows(
    ids: list[str],
    pool: dict[str, Candidate],
    now: datetime,
    cfg: HeatConfig,
    pending: Mapping[str, Access] | None = None,
) -> list[dict[str, Any]]:
    """The heat each result gets: cooled to ``now``, then raised by one access (from its
    access not written yet, when ``pending`` has one, else from the stored heat)."""
    rows = []
    for item_id in ids:
        c = pool[item_id]
        queued = pending.get(item_id) if pending else None
        since = queued.at if queued else (c.last_access or c.ingested_at or now)
        stored = queued.heat if queued else c.heat
        heat = touch(
            stored if stored is not None else 0.0,
            since,
            now,
            decay_rate=cfg.decay_rate_per_day,
            floor=cfg.floor,
            boost=cfg.access_boost,
        )
        rows.append({"id": item_id, "heat": heat})
    return rows
