"""The intent rules: named patterns, each voting a weight for one query intent (the intents
are :class:`pipelines.recall.intent.Intent`'s values). With none, every query is semantic."""

from __future__ import annotations

import re
from dataclasses import dataclass

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
    intent: str  # an Intent value
    pattern: re.Pattern[str]
    weight: float = _NORMAL


def _rule(
    name: str, intent: str, pattern: str, weight: float = _NORMAL, *, case: bool = False
) -> IntentRule:
    flags = 0 if case else re.IGNORECASE
    return IntentRule(name, intent, re.compile(pattern, flags), weight)


#: The rule table. Order is irrelevant for the outcome (scores are summed), but rule
#: names are reported in this order.
RULES: tuple[IntentRule, ...] = (
    # --- instruction: standing orders about how the assistant must behave
    _rule(
        "always_never_directive",
        "instruction",
        r"\b(?:always|never)\s+(?:\w+\s+)?(?:respond|reply|answer|use|write|call|address|"
        r"refer|mention|include|format|say|speak|talk|sign|start|end|ask|add|put)\b",
        _STRONG,
    ),
    _rule(
        "negative_imperative",
        "instruction",
        r"^\s*(?:please\s+)?(?:do\s+not|don['’]t)\s+(?:ever\s+)?\w+",
        _NORMAL,
    ),
    _rule(
        "instruction_noun",
        "instruction",
        r"\b(?:instructions?|guidelines?|house\s+rules?|standing\s+orders?|"
        r"formatting\s+rules?)\b",
        _NORMAL,
    ),
    _rule(
        "how_should_respond",
        "instruction",
        r"\bhow\s+(?:should|must|do)\s+(?:you|i|we)\s+(?:respond|reply|answer|format|"
        r"address|write|talk)\b",
        _STRONG,
    ),
    # --- summarization
    _rule(
        "summarize_verb",
        "summarization",
        r"\b(?:summari[sz]e|summari[sz]ing|sum\s+up|recap|give\s+(?:me\s+)?an?\s+overview)\b",
        _STRONG,
    ),
    _rule(
        "summary_noun",
        "summarization",
        r"\b(?:summary|overview|gist|tl;?dr|key\s+points|main\s+points|highlights)\b",
        _NORMAL,
    ),
    # --- event order
    _rule(
        "what_order",
        "event_order",
        r"\b(?:(?:in\s+)?(?:what|which)\s+order|order\s+(?:of|in\s+which)|chronolog\w*|"
        r"sequence\s+of|timeline)\b|\bin\s+order\b(?!\s+(?:to|for)\b)",
        _STRONG,
    ),
    _rule(
        "first_then",
        "event_order",
        r"\bfirst\b.*\b(?:then|next|afterwards|after\s+that|later|second)\b",
        _STRONG,
    ),
    _rule(
        "which_first",
        "event_order",
        r"\bwhich\b.*\b(?:came|happened|occurred|started|was\s+done)\s+(?:first|last|earlier|"
        r"later)\b|\b(?:before\s+or\s+after|earlier\s+or\s+later|first\s+or\s+second)\b",
        _STRONG,
    ),
    _rule(
        "did_before_after_event",
        "event_order",
        rf"\b(?:did|was|were|had)\b.+\b(?:before|after)\s+(?!(?:the\s+)?(?:\d|{_MONTH}\b|"
        r"last\b|this\b|next\b|yesterday\b|today\b|that\b|then\b))\w+",
        _NORMAL,
    ),
    # --- knowledge update: the latest value of something that changes
    _rule(
        "current_latest",
        "knowledge_update",
        r"\b(?:current(?:ly)?|latest|most\s+recent(?:ly)?|up[-\s]to[-\s]date|"
        r"at\s+the\s+moment|as\s+of\s+now|right\s+now|nowadays)\b",
        _STRONG,
    ),
    _rule(
        "still_anymore",
        "knowledge_update",
        r"\b(?:still|anymore|any\s+longer|no\s+longer)\b",
        _NORMAL,
    ),
    _rule(
        "changed_value",
        "knowledge_update",
        r"\b(?:changed?|switched|updated?|moved\s+to)\b",
        _NORMAL,
    ),
    # --- causal
    _rule("why", "causal", r"\bwhy\b|\bhow\s+come\b", _STRONG),
    _rule(
        "what_caused",
        "causal",
        r"\bwhat\s+(?:caused|made|led|motivated|inspired|prompted|drove|triggered|"
        r"convinced)\b|\bwhat\s+was\s+the\s+(?:cause|reason|motivation)\b",
        _STRONG,
    ),
    _rule(
        "reason_words",
        "causal",
        r"\b(?:reasons?|because|due\s+to|motivat\w*|led\s+to|result\s+of|consequence)\b",
        _NORMAL,
    ),
    # --- multi-hop: needs facts about several entities or several memories combined
    _rule(
        "in_common",
        "multi_hop",
        r"\b(?:in\s+common|both|each\s+of|shared?\s+by|similarit(?:y|ies)|"
        r"same\s+\w+\s+as|as\s+well\s+as)\b",
        _STRONG,
    ),
    _rule(
        "compare",
        "multi_hop",
        r"\b(?:compar(?:e|ed|ing|ison)|differen(?:ce|t)\s+between|relationship\s+between|"
        r"connection\s+between|related\s+to)\b",
        _NORMAL,
    ),
    _rule(
        "coordinated_names",
        "multi_hop",
        rf"\b{_NAME}\s*(?:,\s*{_NAME}\s*)*(?:,\s*)?\s+and\s+{_NAME}\b",
        _WEAK,
        case=True,
    ),
    # --- temporal
    _rule(
        "when_question",
        "temporal",
        r"\bwhen\s+(?:did|was|is|were|will|does|do|has|had|are|would)\b|\bwhen['’]s\b|"
        r"^\s*when\b|\bsince\s+when\b",
        _STRONG,
    ),
    _rule(
        "how_long",
        "temporal",
        r"\bhow\s+(?:long|many\s+(?:days|weeks|months|years)|often|soon|recently)\b",
        _STRONG,
    ),
    _rule(
        "what_time",
        "temporal",
        r"\b(?:what|which)\s+(?:time|date|day|year|month|week|season)\b",
        _STRONG,
    ),
    _rule(
        "relative_time",
        "temporal",
        r"\b(?:recently|lately|yesterday|today|tonight|ago|earlier\s+this|"
        r"(?:last|past|previous|this|next)\s+(?:week|weekend|month|year|night|summer|"
        r"winter|spring|fall|autumn|\d+\s+\w+))\b",
        _NORMAL,
    ),
    _rule(
        "absolute_date",
        "temporal",
        rf"\b(?:(?:in|on|during|since|before|after|until)\s+{_MONTH}\b|{_MONTH}\s+\d{{4}}\b|"
        rf"(?:in|since|before|after|during)\s+(?:19|20)\d{{2}}\b|\d{{4}}-\d{{2}}-\d{{2}})",
        _NORMAL,
    ),
    # --- preference / inclination
    _rule(
        "prefer",
        "preference",
        r"\b(?:prefers?|preferred|preferences?|favou?rites?)\b",
        _STRONG,
    ),
    _rule(
        "likes",
        "preference",
        r"\b(?:does|do|did|would|will)\s+(?:[\w'’]+\s+){1,3}?(?:like|love|enjoy|hate|dislike|"
        r"want|fancy|be\s+(?:into|interested\s+in))\b|\b(?:interested\s+in|fond\s+of|"
        r"into)\b.*\?",
        _NORMAL,
    ),
    _rule(
        "hypothetical_inclination",
        "preference",
        r"\b(?:[Ww]ould|[Mm]ight|[Cc]ould)\s+[A-Z][\w'’]*\s+(?:\w+\s+)?(?:pursue|consider|choose|"
        r"go\s+for|be\s+(?:likely|open|willing|interested)|want|like|enjoy|prefer)\b",
        _STRONG,
        case=True,
    ),
    _rule(
        "taste_words",
        "preference",
        r"\b(?:tastes?|opinion\s+(?:on|of|about)|feel\s+about|think\s+(?:of|about))\b",
        _WEAK,
    ),
    # --- entity: facts about one named thing or person
    _rule(
        "who_is",
        "entity",
        r"\bwho\s+(?:is|was|are|were)\b|\btell\s+me\s+about\b|"
        r"\bwhat\s+do\s+(?:you|we|i)\s+know\s+about\b",
        _STRONG,
    ),
    _rule(
        "possessive_attribute",
        "entity",
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
        "entity",
        r"\bwhat\s+does\s+[A-Z]\w*\s+do\s+(?:for\s+(?:a\s+living|work)|professionally)\b",
        _STRONG,
        case=True,
    ),
    _rule(
        "possessive_name",
        "entity",
        rf"\b{_NOT_POSSESSOR}[A-Z][a-z]+['’]s\b",
        _WEAK,
        case=True,
    ),
)


@dataclass(frozen=True)
class IntentRules:
    """The intent rules of one language (default: English)."""

    #: Each rule adds its weight to its intent when it matches; the highest total wins.
    rules: tuple[IntentRule, ...] = RULES
