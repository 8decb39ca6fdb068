"""Step ``embeddings``: the stored embeddings of the head of the ranking that earlier steps
did not bring, for selection (the oversampled head) or for the caller (the results): from
the process's vector cache where it holds them, else from the graph."""

from __future__ import annotations

from typing import Literal

import numpy as np

from pipelines.recall.state import Explanations, RecallState, Row
from pipelines.recall.steps.base import RecallStep, StepContext
from pipelines.recall.steps.token_reads import cached_embeddings, keep_embeddings, memory_stamps


class Embeddings(RecallStep):
    kind: Literal["embeddings"] = "embeddings"
    optional = True
    requires = ("fuse",)
    after = ("rerank", "session_documents", "late_interaction", "session_late_interaction")

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return bool(state.order) and state.wants_embeddings

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        plan = state.plan
        head = state.order[: plan.pool if state.preset.has("select") else plan.k]
        missing = [i for i in head if i not in state.embeddings]
        stamps = memory_stamps(state, missing)
        state.embeddings.update(cached_embeddings(ctx, stamps))
        rest = [i for i in missing if i not in state.embeddings]
        if rest:
            read = parse_embeddings(ctx.store.read("recall/embeddings", space=ctx.space, ids=rest))
            state.embeddings.update(read)
            keep_embeddings(ctx, stamps, read)
        return None


def parse_embeddings(rows: list[Row]) -> dict[str, np.ndarray]:
    return {
        r["id"]: np.asarray(r["embedding"], dtype=np.float32)
        for r in rows
        if r["embedding"] is not None
    }
