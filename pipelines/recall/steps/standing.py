"""Step ``standing``: the standing instructions and preferences a task needs.

A request for help ("show me how to implement login") seldom repeats the words of the
instruction that governs the answer ("always format code snippets with syntax highlighting
when I ask about implementation details"), so neither the query's vector nor its words find
the turn that gave it. For a task-like query (:func:`pipelines.recall.query.task_request`),
or every query with ``candidates.standing_scope = "all"``, the space's active instruction and
preference facts (extracted at ingest, embedded) are ranked by cosine with the query, or with
the topic a statement is conditioned on ("… when I ask about deadlines"); the turns that
stated the closest ones join the pool as a ``standing`` ranking, which the fusion weighs by
``fusion.standing_weight``. That round trip is the read ``standing_statements``, started
once the query is embedded (on the executor, beside the vector candidates, when there is
one); ``standing`` merges what it brought."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pipelines.recall.config import SIGNAL_STANDING
from pipelines.recall.state import Explanations, RecallState, Row, ranked
from pipelines.recall.steps.base import Read, RecallStep, StepContext, after_embed
from pipelines.recall.steps.candidate_query import filter_params, merge, parse_candidates

STANDING_CATEGORIES = ("instruction", "preference")


def wanted(state: RecallState, ctx: StepContext) -> bool:
    """Whether the query asks for the standing statements (and has a vector to rank them)."""
    cfg = ctx.config
    return (
        (state.plan.task_like or cfg.candidates.standing_scope == "all")
        and state.query_vector is not None
        and cfg.fusion.standing_weight > 0.0
        and cfg.candidates.standing_k > 0
    )


def standing_read(state: RecallState, ctx: StepContext) -> Callable[[], list[Row]]:
    """The read of the closest active standing statements, as a call."""
    assert state.query_vector is not None  # wanted() checked it
    cfg = ctx.config.candidates
    params = {
        "space": ctx.space,
        "embedding": state.query_vector.tolist(),
        "categories": list(STANDING_CATEGORIES),
        "min_similarity": cfg.standing_min_similarity,
        "k": cfg.standing_k,
        **filter_params(state.request),
    }
    store = ctx.store
    return lambda: store.read("recall/standing_candidates", **params)


#: The closest active standing statements, sent beside the vector candidates.
STANDING_STATEMENTS = Read[list[Row]]("standing_statements", after_embed, wanted, standing_read)


class Standing(RecallStep):
    kind: Literal["standing"] = "standing"
    requires = ("understand", "candidates")
    after = ("embed",)
    reads = (STANDING_STATEMENTS,)
    needs_query_vector = True

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return STANDING_STATEMENTS.started(state)

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        merge(state.pool, parse_candidates(STANDING_STATEMENTS.result(state) or []))
        return None


class StandingSlots(RecallStep):
    """The turns of the best standing statements the ``standing`` step found always have a
    place among the results (``selection.standing_slots``): the last places, when selection
    left them out. Which statements govern a task is decided by their cosine with it; the
    rescoring steps, which weigh the words a turn shares with the query, would drop them."""

    kind: Literal["standing_slots"] = "standing_slots"
    requires = ("standing",)
    after = ("select", "replies")

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return ctx.config.selection.standing_slots > 0 and bool(state.order)

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        results = state.final_ids()
        state.results = with_standing(results, state, ctx.config.selection.standing_slots)
        added = [i for i in state.results if i not in results]
        return {i: {"standing_slot": True} for i in added} if state.explaining else None


def with_standing(results: list[str], state: RecallState, slots: int) -> list[str]:
    """``results`` with the turns of the ``slots`` best standing statements where they are
    missing, in the last places; never more than ``k`` results, and the first result stays."""
    best = ranked(
        [(c.raw[SIGNAL_STANDING], c.id) for c in state.pool.values() if SIGNAL_STANDING in c.raw]
    )
    room = state.plan.k - 1 if results else state.plan.k
    missing = [i for i in best[:slots] if i not in results][:room]
    return results[: min(len(results), state.plan.k - len(missing))] + missing


__all__ = ["SIGNAL_STANDING", "STANDING_STATEMENTS", "Standing", "StandingSlots"]
