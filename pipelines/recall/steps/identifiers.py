"""Steps ``identifiers`` and ``exact_first``: a query's identifier-like tokens (codes, ids,
hashes, paths, versions: :mod:`pipelines.recall.identifiers`) are looked up exactly, and a
memory holding one verbatim is returned first.

Why a step of its own: an identifier such as "SCALEMARK000007" is one full-text term among a
space of look-alikes; the full-text signal does rank its memory first, but fusion gives that
no more than one RRF rank, and the rescoring steps after it (the reranker's blend with the
vector score, late interaction, MMR) weigh meaning, where every "SCALEMARK0000xx" memory is
the same. ``identifiers`` adds the exact matches to the pool (the full-text index finds them
by phrase, the text is checked for the identifier itself); ``exact_first`` puts them at the
head of the results after every reordering step (among themselves in the order those steps
gave them)."""

from __future__ import annotations

from typing import Literal

from pipelines import spaces
from pipelines.recall.config import SIGNAL_FULLTEXT
from pipelines.recall.identifiers import contains_identifier, identifier_phrase
from pipelines.recall.query import scope_fulltext_query
from pipelines.recall.state import Explanations, RecallState
from pipelines.recall.steps.base import RecallStep, StepContext
from pipelines.recall.steps.candidate_query import filter_params, merge, parse_candidates

#: Memories read per identifier (an identifier shared by more is no lookup key).
EXACT_FETCH = 50


class Identifiers(RecallStep):
    kind: Literal["identifiers"] = "identifiers"
    requires = ("understand",)
    after = ("candidates",)

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return bool(state.plan.identifiers) and state.plan.weights[SIGNAL_FULLTEXT] > 0.0

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        idents = state.plan.identifiers
        tag = spaces.fulltext_tag(ctx.space)
        rows = ctx.store.read(
            "recall/identifier_candidates",
            space=ctx.space,
            **filter_params(state.request),
            identifiers=[
                {"lucene": scope_fulltext_query(identifier_phrase(i), tag), "needle": i.lower()}
                for i in idents
            ],
            fetch=EXACT_FETCH,
            k=EXACT_FETCH,
        )
        exact: dict[str, list[str]] = {}
        kept = []
        for r in rows:
            found = [
                idents[i] for i in r["matched"] if contains_identifier(r["text"] or "", idents[i])
            ]
            if found:
                exact[r["id"]] = found
                kept.append(r)
        merge(state.pool, parse_candidates(kept))
        state.exact = exact
        if not state.explaining:
            return None
        return {i: {"exact_identifier": found} for i, found in exact.items()}


class ExactFirst(RecallStep):
    """The memories holding a query identifier verbatim head the results (among themselves:
    the results' order, then the ranking's for those selection left out); the others follow
    in their order, ``k`` at most."""

    kind: Literal["exact_first"] = "exact_first"
    requires = ("identifiers",)
    after = ("select", "replies", "standing_slots")

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return bool(state.exact)

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        chosen = state.final_ids()
        # the results' own order first (selection's), then the ranking's for the others
        picked = {item_id: n for n, item_id in enumerate(chosen)}
        ranked = {item_id: n for n, item_id in enumerate(state.order)}
        far = len(ranked)

        def place(item_id: str) -> tuple[int, int, str]:
            if item_id in picked:
                return (0, picked[item_id], item_id)
            return (1, ranked.get(item_id, far), item_id)

        exact = sorted(state.exact, key=place)[: state.plan.k]
        rest = [i for i in chosen if i not in state.exact]
        state.results = (exact + rest)[: state.plan.k]
        return None
