"""Step ``order`` (pure): the results in time order when the request asks for it
(``order="time"``), or for event-order questions with ``order="auto"`` when
``order.event_order`` is on. Which results are returned never depends on it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pipelines.recall.intent import Intent
from pipelines.recall.state import Candidate, Explanations, RecallState
from pipelines.recall.steps.base import RecallStep, StepContext

_FAR_PAST = datetime.min.replace(tzinfo=UTC)


class Order(RecallStep):
    kind: Literal["order"] = "order"
    requires = ("fuse",)
    after = ("select", "exact_first")

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        order = state.request.order
        return order == "time" or (
            order == "auto"
            and ctx.config.order.event_order
            and state.plan.intent == Intent.EVENT_ORDER
        )

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        state.results = time_order(state.final_ids(), state.pool)
        return None


def time_order(ids: list[str], pool: dict[str, Candidate]) -> list[str]:
    """By event time, then session and turn (a session's turns share its start time)."""
    return sorted(
        ids,
        key=lambda i: (
            pool[i].event_time or _FAR_PAST,
            pool[i].session_id or "",
            pool[i].turn_index if pool[i].turn_index is not None else -1,
        ),
    )
