"""Step ``candidates``: every signal's candidates, in one round trip or (with an executor and
``candidates.concurrent_signals``) two concurrent ones: the signals that need no embedding
are sent before the query is embedded (the read ``lexical``), the vector signals after."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pipelines import spaces
from pipelines.recall.config import SIGNAL_VECTOR
from pipelines.recall.state import Explanations, RecallState, Row
from pipelines.recall.steps.base import Read, RecallStep, StepContext, after_understand
from pipelines.recall.steps.candidate_query import (
    NO_LEXICAL_SIGNALS,
    candidate_params,
    filter_params,
    has_lexical_signals,
    merge,
    parse_candidates,
)
from pipelines.recall.steps.embed import needs_embedding


def _lexical_wanted(state: RecallState, ctx: StepContext) -> bool:
    return needs_embedding(state)


def _lexical_call(state: RecallState, ctx: StepContext) -> Callable[[], list[Row]] | None:
    params = candidate_params(ctx.space, state.request, state.plan, state.profile, ctx.config, [])
    if not has_lexical_signals(params):
        return None
    store = ctx.store
    return lambda: store.read("recall/candidates", **params)


#: The embedding-free signals (full-text, entities, heat, recency), sent while the query is
#: embedded; only with the executor (else they share the vector signals' round trip).
LEXICAL = Read[list[Row]](
    "lexical", after_understand, _lexical_wanted, _lexical_call, concurrent_only=True
)


class Candidates(RecallStep):
    """Every signal's candidates (the vector signals only, when the read ``lexical`` brought
    the others), then more vector candidates while the approximate index's share of the space
    came back short."""

    kind: Literal["candidates"] = "candidates"
    requires = ("understand",)
    after = ("embed",)
    reads = (LEXICAL,)

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        plan, cfg = state.plan, ctx.config.candidates
        vector = state.query_vector
        use_vector = vector is not None and plan.weights[SIGNAL_VECTOR] > 0.0
        embeddings = [vector.tolist()] if use_vector and vector is not None else []
        stages = None
        filtered = state.request.filters.stages is not None
        if embeddings and filtered and not cfg.use_exact_scan(state.profile.size):
            stages = self._exact_stages(state, ctx)
        params = candidate_params(
            ctx.space, state.request, plan, state.profile, ctx.config, embeddings, stages
        )
        read = ctx.store.read
        if not LEXICAL.started(state):
            pool = parse_candidates(read("recall/candidates", **params))
        else:
            params.update(NO_LEXICAL_SIGNALS)
            pool = parse_candidates(read("recall/candidates", **params)) if embeddings else {}
            merge(pool, parse_candidates(LEXICAL.result(state) or []))
        # Adaptive over-fetch: the approximate index is searched globally and post-filtered;
        # when the space's share came back short, ask again (vector only) with a larger k.
        vector_k, size = params["vector_k"], state.profile.size
        attempt = 0
        while embeddings and not params["exact"] and params["exact_stages"] is None:
            got = sum(1 for c in pool.values() if SIGNAL_VECTOR in c.raw)
            fetch = params["vector_fetch"]
            if got >= min(vector_k, size) or fetch >= cfg.vector_overfetch_max:
                break
            attempt += 1
            larger = cfg.vector_fetch_size(
                vector_k,
                space_size=size,
                filter_selectivity=state.profile.selectivity,
                attempt=attempt,
            )
            if larger <= fetch:  # an over-fetch factor of 1 never grows: stop, do not spin
                break
            params.update(NO_LEXICAL_SIGNALS, windows=[], vector_fetch=larger)
            merge(pool, parse_candidates(read("recall/candidates", **params)))
        state.pool = pool
        if not pool:
            spaces.require(ctx.store, ctx.space)  # nothing found: is there a space at all?
        return None

    @staticmethod
    def _exact_stages(state: RecallState, ctx: StepContext) -> list[str] | None:
        """The stage filter (ids and labels) when its stages are small enough to scan
        exactly through the (space, stage_id) index, else None (the global index)."""
        stages = filter_params(state.request)["stages"]
        size = ctx.stage_scope_size(stages)
        return stages if ctx.config.candidates.use_exact_scan(size) else None
