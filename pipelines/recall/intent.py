"""Rule-based query-intent classification (read path, stage 1).

The intent of a recall query selects a weight profile over the retrieval signals
(see :class:`pipelines.recall.config.RecallConfig.intent_weights`). Classification is
deliberately model-free: a fixed list of named regular-expression rules (in
:mod:`pipelines.language.intents`), each voting a
weight for one intent. The intent with the highest total wins; ties are broken by the
fixed :data:`INTENT_PRIORITY` order, and :attr:`Intent.SEMANTIC` is the fallback when no
rule fires. The result is fully deterministic and explains itself (matched rule names and
every intent's score), which keeps benchmark regressions debuggable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from pipelines.language import current
from pipelines.language.intents import IntentRule


class Intent(StrEnum):
    """Kinds of recall queries; each one maps to a signal-weight profile."""

    TEMPORAL = "temporal"
    CAUSAL = "causal"
    ENTITY = "entity"
    KNOWLEDGE_UPDATE = "knowledge_update"
    MULTI_HOP = "multi_hop"
    PREFERENCE = "preference"
    INSTRUCTION = "instruction"
    EVENT_ORDER = "event_order"
    SUMMARIZATION = "summarization"
    SEMANTIC = "semantic"


#: Tie-break order (earlier wins when two intents have the same score). More specific,
#: structurally distinctive intents come first; SEMANTIC is always last.
INTENT_PRIORITY: tuple[Intent, ...] = (
    Intent.INSTRUCTION,
    Intent.SUMMARIZATION,
    Intent.EVENT_ORDER,
    Intent.KNOWLEDGE_UPDATE,
    Intent.CAUSAL,
    Intent.MULTI_HOP,
    Intent.TEMPORAL,
    Intent.PREFERENCE,
    Intent.ENTITY,
    Intent.SEMANTIC,
)


@dataclass(frozen=True, slots=True)
class IntentResult:
    """Outcome of :func:`classify_intent`.

    ``matched_rules`` lists the names of every rule that fired (in rule-table order) and
    ``scores`` holds the summed rule weight of every intent (0.0 when nothing fired).
    """

    intent: Intent
    matched_rules: tuple[str, ...]
    scores: dict[Intent, float] = field(default_factory=dict)


def classify_intent(query: str, rules: tuple[IntentRule, ...] | None = None) -> IntentResult:
    """Classify ``query`` by summing the weights of every matching rule per intent.

    The winner is the intent with the highest score, ties broken by
    :data:`INTENT_PRIORITY`; with no matching rule the result is ``Intent.SEMANTIC``.
    """
    scores: dict[Intent, float] = {intent: 0.0 for intent in INTENT_PRIORITY}
    rules = current().intents.rules if rules is None else rules
    matched: list[str] = []
    for rule in rules:
        if rule.pattern.search(query):
            scores[Intent(rule.intent)] += rule.weight
            matched.append(rule.name)
    best = max(
        INTENT_PRIORITY,
        key=lambda intent: (scores[intent], -INTENT_PRIORITY.index(intent)),
    )
    if scores[best] <= 0.0:
        best = Intent.SEMANTIC
    return IntentResult(intent=best, matched_rules=tuple(matched), scores=scores)
