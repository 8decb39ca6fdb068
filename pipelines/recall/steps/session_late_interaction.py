"""Step ``session_late_interaction``: rank the conversation sessions of the head of the
ranking by MaxSim of the query's token vectors against every token vector of the session's
memories, and lift candidates by their session's rank (as the session documents do). Only
for requests across sessions (:func:`~pipelines.recall.state.session_scope`)."""

from __future__ import annotations

from typing import Literal

import numpy as np

from pipelines.models.late_interaction import late_score, unpack_concatenated
from pipelines.recall.state import Explanations, RecallState, session_scope, statuses
from pipelines.recall.steps.base import RecallStep, StepContext
from pipelines.recall.steps.session_documents import lift_weight, session_lift
from pipelines.recall.steps.token_reads import session_tokens


class SessionLateInteraction(RecallStep):
    kind: Literal["session_late_interaction"] = "session_late_interaction"
    optional = True
    explain_as = "session_late_interaction"
    requires = ("fuse",)
    after = ("late_interaction",)
    needs_query_tokens = True

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return (
            bool(state.order)
            and state.query_tokens is not None
            and session_scope(state.request)
            and ctx.config.session_late_interaction.weight > 0.0
        )

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        assert state.query_tokens is not None  # applies() checked it
        cfg = ctx.config.session_late_interaction
        sessions = head_sessions(state, cfg.window)
        if len(sessions) < 2:
            return None
        tokens = session_tokens(ctx, sessions, statuses(state.request))
        scores = session_scores(tokens, state.query_tokens, cfg.length_penalty)
        if len(scores) < 2:
            return None
        ranking = sorted(scores, key=lambda s: (-scores[s], s))
        return session_lift(state, ranking, lift_weight(state, cfg.weight, ctx.config), 0, scores)


def head_sessions(state: RecallState, window: int) -> list[str]:
    """The sessions of the first ``window`` candidates, in order of first appearance."""
    return list(dict.fromkeys(s for i in state.order[:window] if (s := state.pool[i].session_id)))


def session_scores(
    tokens: dict[str, list[bytes]], query_tokens: np.ndarray, penalty: float
) -> dict[str, float]:
    """Each session's MaxSim score over all of its memories' token vectors."""
    return {
        session: late_score(query_tokens, unpack_concatenated(blobs), penalty)
        for session, blobs in tokens.items()
        if blobs
    }
