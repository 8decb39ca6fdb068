"""Step ``validity``: with ``as_of`` (valid time) and/or ``known_at`` (recorded time), only
the candidates valid then stay in the pool, by the rule of ``assemble/valid_at`` (the one
statement both recall and context assembly use): existing then, and not superseded by a
version that had become true (``as_of``) or been recorded (``known_at``) by then."""

from __future__ import annotations

from typing import Literal

from pipelines.graph import as_utc
from pipelines.recall.state import Explanations, RecallState
from pipelines.recall.steps.base import RecallStep, StepContext


class Validity(RecallStep):
    kind: Literal["validity"] = "validity"
    requires = ("candidates",)
    after = ("identifiers", "chunks", "standing")

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return state.request.time_travel and bool(state.pool)

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        request = state.request
        rows = ctx.store.read(
            "assemble/valid_at",
            space=ctx.space,
            ids=sorted(state.pool),
            as_of=as_utc(request.as_of),
            known_at=as_utc(request.known_at),
            include_superseded=request.include_superseded,
        )
        valid = {r["id"] for r in rows}
        state.pool = {i: c for i, c in state.pool.items() if i in valid}
        state.exact = {i: found for i, found in state.exact.items() if i in valid}
        return None
