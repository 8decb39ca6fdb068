"""Step ``touch``: one write raising the heat and access count of the results (never for a
request with ``touch=False``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

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
        now = datetime.now(UTC)
        rows = touch_rows(state.final_ids(), state.pool, now, ctx.config.heat)
        ctx.store.write("recall/touch", space=ctx.space, rows=rows, now=now)
        return None


def touch_rows(
    ids: list[str], pool: dict[str, Candidate], now: datetime, cfg: HeatConfig
) -> list[dict[str, Any]]:
    """The heat each result gets: cooled to ``now``, then raised by one access."""
    rows = []
    for item_id in ids:
        c = pool[item_id]
        since = c.last_access or c.ingested_at or now
        heat = touch(
            c.heat if c.heat is not None else 0.0,
            since,
            now,
            decay_rate=cfg.decay_rate_per_day,
            floor=cfg.floor,
            boost=cfg.access_boost,
        )
        rows.append({"id": item_id, "heat": heat})
    return rows
