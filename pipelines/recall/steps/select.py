"""Step ``select`` (pure): greedy MMR over the oversampled head of the ranking (by count,
never tokens), optionally with session novelty: a candidate whose conversation session
already has a pick is charged once, so the results cover more conversations."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from pipelines.recall.selection import mmr_select
from pipelines.recall.state import Explanations, RecallState, session_scope
from pipelines.recall.steps.base import RecallStep, StepContext
from pipelines.recall.steps.session_documents import pool_resolution


class Select(RecallStep):
    kind: Literal["select"] = "select"
    optional = True
    explain_as = "selection"
    requires = ("embeddings",)
    #: Charge session novelty (``selection.session_novelty``, or the request's own) for
    #: requests across sessions (:func:`~pipelines.recall.state.session_scope`).
    session_novelty: bool = False

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return bool(state.order)

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        cfg = ctx.config.selection
        head = state.order[: state.plan.pool]
        dims = ctx.embedder.dimensions
        matrix = np.zeros((len(head), dims), dtype=np.float64)
        for row, item_id in enumerate(head):
            emb = state.embeddings.get(item_id)
            if emb is not None and emb.shape == (dims,):
                matrix[row] = emb
        novelty = self.novelty(state, cfg.session_novelty)
        if novelty > 0.0 and cfg.novelty_by_resolution:
            novelty *= pool_resolution(state, ctx.config)
        picks = mmr_select(
            head,
            [state.scores[i] for i in head],
            matrix,
            state.plan.k,
            cfg.mmr_lambda,
            groups=[state.pool[i].session_id for i in head] if novelty > 0.0 else None,
            group_penalty=novelty,
        )
        state.results = [p.id for p in picks]
        notes: dict[str, dict[str, Any]] = {}
        if state.explaining:
            for p in picks:
                notes[p.id] = {
                    "relevance": p.relevance,
                    "penalty": p.penalty,
                    "session_penalty": p.group_penalty,
                    "gain": p.gain,
                    "rank": p.rank,
                }
        return notes

    def novelty(self, state: RecallState, default: float) -> float:
        """The session novelty charged for this request (0: none)."""
        if not self.session_novelty or not session_scope(state.request):
            return 0.0
        own = state.request.session_novelty
        return default if own is None else own
