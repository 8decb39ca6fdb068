"""Step ``abstain`` (pure): is the evidence strong enough to answer
(:func:`~pipelines.recall.abstain.decide_abstention`)? The results are returned either way."""

from __future__ import annotations

from typing import Literal

from pipelines.recall.abstain import (
    AbstentionDecision,
    AbstentionInputs,
    decide_abstention,
    keyword_coverage,
    top_overlap,
)
from pipelines.recall.config import SIGNAL_FULLTEXT, SIGNAL_VECTOR, AbstentionThresholds
from pipelines.recall.state import Explanations, RecallState, cosine_from_neo4j, ranked
from pipelines.recall.steps.base import RecallStep, StepContext


class Abstain(RecallStep):
    kind: Literal["abstain"] = "abstain"
    requires = ("fuse",)
    after = ("select", "exact_first", "order")

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        state.abstention = abstention(state, ctx.config.abstention)
        return None


def abstention(state: RecallState, thresholds: AbstentionThresholds) -> AbstentionDecision:
    """The decision on the state's features; never abstain when a result holds an identifier
    of the query verbatim (an exact lookup hit is the answer, however little it means)."""
    if any(i in state.exact for i in state.final_ids()):
        evidence = decide_abstention(abstention_inputs(state, thresholds), thresholds).evidence
        return AbstentionDecision(False, "exact_identifier_match", 1.0, evidence)
    return decide_abstention(abstention_inputs(state, thresholds), thresholds)


def abstention_inputs(state: RecallState, thresholds: AbstentionThresholds) -> AbstentionInputs:
    """The features of a recall's state that the decision reads."""
    pool, plan = state.pool, state.plan
    vector_hits = [c.raw[SIGNAL_VECTOR] for c in pool.values() if SIGNAL_VECTOR in c.raw]
    fulltext_hits = [c.raw[SIGNAL_FULLTEXT] for c in pool.values() if SIGNAL_FULLTEXT in c.raw]

    def ranking(signal: str) -> list[str]:
        return ranked([(c.raw[signal], c.id) for c in pool.values() if signal in c.raw])

    return AbstentionInputs(
        top_vector_similarity=cosine_from_neo4j(max(vector_hits)) if vector_hits else None,
        top_fulltext_score=(
            max(fulltext_hits) if fulltext_hits else (0.0 if plan.fulltext else None)
        ),
        keyword_coverage=keyword_coverage(plan.keywords, (pool[i].text for i in state.final_ids())),
        candidate_count=len(pool),
        signal_agreement=top_overlap(
            ranking(SIGNAL_VECTOR), ranking(SIGNAL_FULLTEXT), thresholds.agreement_top_n
        ),
        speaker_match=state.speaker_match,
    )
