"""Step ``abstain``: is the evidence strong enough to answer, or should recall say "I have no
memory of that"? The results are returned either way.

A fused ranking always returns *something*; abstaining requires evidence that the best
candidates are actually about the query. :func:`decide_abstention` (pure) combines four
cheap, already-computed features:

* the top raw cosine similarity of the vector signal,
* the top full-text (BM25) score, squashed to [0, 1) by ``s / (s + half_saturation)``,
* the fraction of query keywords found in the top-k texts (:func:`keyword_coverage`),
* agreement between the vector and full-text top lists (:func:`top_overlap`).

Decision order: no candidates → abstain; the query names a speaker but the best content
matches were said by others (``speaker_match`` below its minimum) → abstain; a very strong
semantic match → answer; weak semantic *and* weak lexical evidence → abstain; otherwise
abstain iff the weighted mean of the available features is below ``min_evidence``. All
thresholds are plain fields of :class:`~pipelines.recall.config.AbstentionThresholds`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pipelines.recall.config import (
    DEFAULT_RECALL_CONFIG,
    SIGNAL_FULLTEXT,
    SIGNAL_VECTOR,
    AbstentionThresholds,
)
from pipelines.recall.state import (
    AbstentionDecision,
    Explanations,
    RecallState,
    cosine_from_neo4j,
    ranked,
)
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


_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


@dataclass(frozen=True, slots=True)
class AbstentionInputs:
    """Features of one query's retrieval result.

    ``top_vector_similarity`` is raw cosine (−1..1); ``top_fulltext_score`` is the raw,
    unbounded full-text score. Either may be ``None`` when that signal did not run (e.g.
    no searchable keyword); its feature is then left out of the weighted mean.
    """

    top_vector_similarity: float | None
    top_fulltext_score: float | None
    keyword_coverage: float
    candidate_count: int
    signal_agreement: float
    #: Share of the best content matches spoken by a speaker the query names; ``None`` when
    #: the query names no known speaker.
    speaker_match: float | None = None


def _tokens(text: str) -> list[str]:
    return [token.casefold() for token in _WORD.findall(text)]


def keyword_coverage(keywords: Sequence[str], texts: Iterable[str]) -> float:
    """Fraction of ``keywords`` whose tokens all occur (case-insensitively) in ``texts``.

    A multi-word keyword (a quoted phrase, a date) counts as found when each of its tokens
    occurs somewhere in the texts. No keywords means nothing to contradict: 1.0.
    """
    if not keywords:
        return 1.0
    vocabulary: set[str] = set()
    for text in texts:
        vocabulary.update(_tokens(text))
    found = 0
    for keyword in keywords:
        tokens = _tokens(keyword)
        if tokens and all(token in vocabulary for token in tokens):
            found += 1
    return found / len(keywords)


def top_overlap(
    first: Sequence[str],
    second: Sequence[str],
    n: int = DEFAULT_RECALL_CONFIG.abstention.agreement_top_n,
) -> float:
    """``|top_n(first) ∩ top_n(second)| / min(n, |top_n(first)|, |top_n(second)|)``.

    1.0 when the shorter top list is contained in the other; 0.0 if either is empty.
    """
    if n <= 0:
        raise ValueError("n must be positive")
    a, b = set(first[:n]), set(second[:n])
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _vector_feature(similarity: float, thresholds: AbstentionThresholds) -> float:
    low, high = thresholds.min_vector_similarity, thresholds.strong_vector_similarity
    return min(1.0, max(0.0, (similarity - low) / (high - low)))


def _confidence(evidence: float, boundary: float) -> float:
    span = max(boundary, 1.0 - boundary)
    return min(1.0, 0.5 + 0.5 * abs(evidence - boundary) / span) if span > 0 else 1.0


def decide_abstention(
    inputs: AbstentionInputs,
    thresholds: AbstentionThresholds = DEFAULT_RECALL_CONFIG.abstention,
) -> AbstentionDecision:
    """Decide whether to abstain; see the module docstring for the decision order.

    The returned ``evidence`` is the weighted mean of the available features
    (vector similarity rescaled between ``min_`` and ``strong_vector_similarity``,
    keyword coverage, squashed full-text score, signal agreement).
    """
    t = thresholds
    if inputs.candidate_count < max(1, t.min_candidates):
        return AbstentionDecision(True, "no_candidates", 1.0, 0.0)

    features: list[tuple[float, float]] = [
        (t.weight_keywords, min(1.0, max(0.0, inputs.keyword_coverage))),
        (t.weight_agreement, min(1.0, max(0.0, inputs.signal_agreement))),
    ]
    sim = inputs.top_vector_similarity
    if sim is not None and math.isfinite(sim):
        features.append((t.weight_vector, _vector_feature(sim, t)))
    fts = inputs.top_fulltext_score
    if fts is not None and math.isfinite(fts):
        squashed = max(0.0, fts) / (max(0.0, fts) + t.fulltext_half_saturation)
        features.append((t.weight_fulltext, squashed))
    total_weight = math.fsum(weight for weight, _ in features)
    evidence = (
        math.fsum(weight * value for weight, value in features) / total_weight
        if total_weight > 0
        else 0.0
    )

    match = inputs.speaker_match
    if match is not None and math.isfinite(match) and match < t.min_speaker_match:
        # "What did Caroline do after the road trip?" when only Melanie talked about it:
        # the content is there, but said by someone else.
        confidence = _confidence(match, t.min_speaker_match)
        return AbstentionDecision(True, "speaker_mismatch", confidence, evidence)
    if sim is not None and sim >= t.strong_vector_similarity:
        return AbstentionDecision(False, "strong_semantic_match", 1.0, evidence)
    weak_semantic = sim is None or sim < t.min_vector_similarity
    if weak_semantic and inputs.keyword_coverage < t.min_keyword_coverage:
        return AbstentionDecision(True, "weak_semantic_and_lexical_match", 1.0, evidence)
    confidence = _confidence(evidence, t.min_evidence)
    if evidence < t.min_evidence:
        return AbstentionDecision(True, "insufficient_evidence", confidence, evidence)
    return AbstentionDecision(False, "sufficient_evidence", confidence, evidence)
