"""Rule-based query-intent classification (read path, stage 1).

The intent of a recall query selects a weight profile over the retrieval signals
(see :class:`pipelines.recall.config.RecallConfig.intent_weights`). Classification is
deliberately model-free: a fixed list of named regular-expression rules, each voting a
weight for one intent. The intent with the highest total wins; ties are broken by the
fixed :data:`INTENT_PRIORITY` order, and :attr:`Intent.SEMANTIC` is the fallback when no
rule fires. The result is fully deterministic and explains itself (matched rule names and
every intent's score), which keeps benchmark regressions debuggable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum


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

_STRONG = 2.0
_NORMAL = 1.0
_WEAK = 0.5

_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)"
)
_NAME = r"[A-Z][a-z]+(?:['’]s)?"
#: Capitalised words whose "'s" is a contraction ("What's"), not a possessive.
_NOT_POSSESSOR = r"(?!(?:What|Who|Where|When|How|Why|That|It|There|Here|Let|He|She)['’]s\b)"


@dataclass(frozen=True, slots=True)
class IntentRule:
    """A named pattern that adds ``weight`` to ``intent`` when it matches the query."""

    name: str
    intent: Intent
    pattern: re.Pattern[str]
    weight: float = _NORMAL


def _rule(
    name: str, intent: Intent, pattern: str, weight: float = _NORMAL, *, case: bool = False
) -> IntentRule:
    flags = 0 if case else re.IGNORECASE
    return IntentRule(name, intent, re.compile(pattern, flags), weight)


#: The rule table. Order is irrelevant for the outcome (scores are summed), but rule
#: names are reported in this order.
RULES: tuple[IntentRule, ...] = (
    # --- instruction: standing orders about how the assistant must behave
    _rule(
        "always_never_directive",
        Intent.INSTRUCTION,
        r"\b(?:always|never)\s+(?:\w+\s+)?(?:respond|reply|answer|use|write|call|address|"
        r"refer|mention|include|format|say|speak|talk|sign|start|end|ask|add|put)\b",
        _STRONG,
    ),
    _rule(
        "negative_imperative",
        Intent.INSTRUCTION,
        r"^\s*(?:please\s+)?(?:do\s+not|don['’]t)\s+(?:ever\s+)?\w+",
        _NORMAL,
    ),
    _rule(
        "instruction_noun",
        Intent.INSTRUCTION,
        r"\b(?:instructions?|guidelines?|house\s+rules?|standing\s+orders?|"
        r"formatting\s+rules?)\b",
        _NORMAL,
    ),
    _rule(
        "how_should_respond",
        Intent.INSTRUCTION,
        r"\bhow\s+(?:should|must|do)\s+(?:you|i|we)\s+(?:respond|reply|answer|format|"
        r"address|write|talk)\b",
        _STRONG,
    ),
    # --- summarization
    _rule(
        "summarize_verb",
        Intent.SUMMARIZATION,
        r"\b(?:summari[sz]e|summari[sz]ing|sum\s+up|recap|give\s+(?:me\s+)?an?\s+overview)\b",
        _STRONG,
    ),
    _rule(
        "summary_noun",
        Intent.SUMMARIZATION,
        r"\b(?:summary|overview|gist|tl;?dr|key\s+points|main\s+points|highlights)\b",
        _NORMAL,
    ),
    # --- event order
    _rule(
        "what_order",
        Intent.EVENT_ORDER,
        r"\b(?:(?:in\s+)?(?:what|which)\s+order|order\s+(?:of|in\s+which)|chronolog\w*|"
        r"sequence\s+of|timeline)\b|\bin\s+order\b(?!\s+(?:to|for)\b)",
        _STRONG,
    ),
    _rule(
        "first_then",
        Intent.EVENT_ORDER,
        r"\bfirst\b.*\b(?:then|next|afterwards|after\s+that|later|second)\b",
        _STRONG,
    ),
    _rule(
        "which_first",
        Intent.EVENT_ORDER,
        r"\bwhich\b.*\b(?:came|happened|occurred|started|was\s+done)\s+(?:first|last|earlier|"
        r"later)\b|\b(?:before\s+or\s+after|earlier\s+or\s+later|first\s+or\s+second)\b",
        _STRONG,
    ),
    _rule(
        "did_before_after_event",
        Intent.EVENT_ORDER,
        rf"\b(?:did|was|were|had)\b.+\b(?:before|after)\s+(?!(?:the\s+)?(?:\d|{_MONTH}\b|"
        r"last\b|this\b|next\b|yesterday\b|today\b|that\b|then\b))\w+",
        _NORMAL,
    ),
    # --- knowledge update: the latest value of something that changes
    _rule(
        "current_latest",
        Intent.KNOWLEDGE_UPDATE,
        r"\b(?:current(?:ly)?|latest|most\s+recent(?:ly)?|up[-\s]to[-\s]date|"
        r"at\s+the\s+moment|as\s+of\s+now|right\s+now|nowadays)\b",
        _STRONG,
    ),
    _rule(
        "still_anymore",
        Intent.KNOWLEDGE_UPDATE,
        r"\b(?:still|anymore|any\s+longer|no\s+longer)\b",
        _NORMAL,
    ),
    _rule(
        "changed_value",
        Intent.KNOWLEDGE_UPDATE,
        r"\b(?:changed?|switched|updated?|moved\s+to|new\s+(?:job|address|phone|number|"
        r"role|title|name|car|home|house|apartment|partner))\b",
        _NORMAL,
    ),
    # --- causal
    _rule("why", Intent.CAUSAL, r"\bwhy\b|\bhow\s+come\b", _STRONG),
    _rule(
        "what_caused",
        Intent.CAUSAL,
        r"\bwhat\s+(?:caused|made|led|motivated|inspired|prompted|drove|triggered|"
        r"convinced)\b|\bwhat\s+was\s+the\s+(?:cause|reason|motivation)\b",
        _STRONG,
    ),
    _rule(
        "reason_words",
        Intent.CAUSAL,
        r"\b(?:reasons?|because|due\s+to|motivat\w*|led\s+to|result\s+of|consequence)\b",
        _NORMAL,
    ),
    # --- multi-hop: needs facts about several entities or several memories combined
    _rule(
        "in_common",
        Intent.MULTI_HOP,
        r"\b(?:in\s+common|both|each\s+of|shared?\s+by|similarit(?:y|ies)|"
        r"same\s+\w+\s+as|as\s+well\s+as)\b",
        _STRONG,
    ),
    _rule(
        "compare",
        Intent.MULTI_HOP,
        r"\b(?:compar(?:e|ed|ing|ison)|differen(?:ce|t)\s+between|relationship\s+between|"
        r"connection\s+between|related\s+to)\b",
        _NORMAL,
    ),
    _rule(
        "coordinated_names",
        Intent.MULTI_HOP,
        rf"\b{_NAME}\s*(?:,\s*{_NAME}\s*)*(?:,\s*)?\s+and\s+{_NAME}\b",
        _WEAK,
        case=True,
    ),
    # --- temporal
    _rule(
        "when_question",
        Intent.TEMPORAL,
        r"\bwhen\s+(?:did|was|is|were|will|does|do|has|had|are|would)\b|\bwhen['’]s\b|"
        r"^\s*when\b|\bsince\s+when\b",
        _STRONG,
    ),
    _rule(
        "how_long",
        Intent.TEMPORAL,
        r"\bhow\s+(?:long|many\s+(?:days|weeks|months|years)|often|soon|recently)\b",
        _STRONG,
    ),
    _rule(
        "what_time",
        Intent.TEMPORAL,
        r"\b(?:what|which)\s+(?:time|date|day|year|month|week|season)\b",
        _STRONG,
    ),
    _rule(
        "relative_time",
        Intent.TEMPORAL,
        r"\b(?:recently|lately|yesterday|today|tonight|ago|earlier\s+this|"
        r"(?:last|past|previous|this|next)\s+(?:week|weekend|month|year|night|summer|"
        r"winter|spring|fall|autumn|\d+\s+\w+))\b",
        _NORMAL,
    ),
    _rule(
        "absolute_date",
        Intent.TEMPORAL,
        rf"\b(?:(?:in|on|during|since|before|after|until)\s+{_MONTH}\b|{_MONTH}\s+\d{{4}}\b|"
        rf"(?:in|since|before|after|during)\s+(?:19|20)\d{{2}}\b|\d{{4}}-\d{{2}}-\d{{2}})",
        _NORMAL,
    ),
    # --- preference / inclination
    _rule(
        "prefer",
        Intent.PREFERENCE,
        r"\b(?:prefers?|preferred|preferences?|favou?rites?)\b",
        _STRONG,
    ),
    _rule(
        "likes",
        Intent.PREFERENCE,
        r"\b(?:does|do|did|would|will)\s+(?:[\w'’]+\s+){1,3}?(?:like|love|enjoy|hate|dislike|"
        r"want|fancy|be\s+(?:into|interested\s+in))\b|\b(?:interested\s+in|fond\s+of|"
        r"into)\b.*\?",
        _NORMAL,
    ),
    _rule(
        "hypothetical_inclination",
        Intent.PREFERENCE,
        r"\b(?:[Ww]ould|[Mm]ight|[Cc]ould)\s+[A-Z][\w'’]*\s+(?:\w+\s+)?(?:pursue|consider|choose|"
        r"go\s+for|be\s+(?:likely|open|willing|interested)|want|like|enjoy|prefer)\b",
        _STRONG,
        case=True,
    ),
    _rule(
        "taste_words",
        Intent.PREFERENCE,
        r"\b(?:tastes?|opinion\s+(?:on|of|about)|feel\s+about|think\s+(?:of|about))\b",
        _WEAK,
    ),
    # --- entity: facts about one named thing or person
    _rule(
        "who_is",
        Intent.ENTITY,
        r"\bwho\s+(?:is|was|are|were)\b|\btell\s+me\s+about\b|"
        r"\bwhat\s+do\s+(?:you|we|i)\s+know\s+about\b",
        _STRONG,
    ),
    _rule(
        "possessive_attribute",
        Intent.ENTITY,
        rf"(?:\b{_NOT_POSSESSOR}[A-Z]\w*['’]s?|"
        r"\b[Mm]y|\b[Hh]is|\b[Hh]er|\b[Tt]heir|\b[Yy]our|"
        r"\b[Tt]he\s+user['’]s)\s+(?:identity|job|name|"
        r"occupation|profession|career|role|title|nationality|age|birthday|background|"
        r"family|hometown|address|email|phone|relationship\s+status|gender|religion|"
        r"pronouns|personality)\b",
        _STRONG,
        case=True,
    ),
    _rule(
        "what_does_do",
        Intent.ENTITY,
        r"\bwhat\s+does\s+[A-Z]\w*\s+do\s+(?:for\s+(?:a\s+living|work)|professionally)\b",
        _STRONG,
        case=True,
    ),
    _rule(
        "possessive_name",
        Intent.ENTITY,
        rf"\b{_NOT_POSSESSOR}[A-Z][a-z]+['’]s\b",
        _WEAK,
        case=True,
    ),
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


def classify_intent(query: str, rules: tuple[IntentRule, ...] = RULES) -> IntentResult:
    """Classify ``query`` by summing the weights of every matching rule per intent.

    The winner is the intent with the highest score, ties broken by
    :data:`INTENT_PRIORITY`; with no matching rule the result is ``Intent.SEMANTIC``.
    """
    scores: dict[Intent, float] = {intent: 0.0 for intent in INTENT_PRIORITY}
    matched: list[str] = []
    for rule in rules:
        if rule.pattern.search(query):
            scores[rule.intent] += rule.weight
            matched.append(rule.name)
    best = max(
        INTENT_PRIORITY,
        key=lambda intent: (scores[intent], -INTENT_PRIORITY.index(intent)),
    )
    if scores[best] <= 0.0:
        best = Intent.SEMANTIC
    return IntentResult(intent=best, matched_rules=tuple(matched), scores=scores)
