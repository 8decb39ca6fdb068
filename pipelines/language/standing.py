"""Standing-statement phrasing: the openers, markers and word lists (lemmas, lower case) by
which a sentence is taken for a standing instruction or a lasting preference. Grammar (spaCy's
tags and dependencies) does the rest (:mod:`pipelines.ingest.standing`,
:mod:`pipelines.ingest.standing_parse`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Verbs of feeling, knowing or encouragement: "don't worry", "never give up" are not rules.
NOT_RULE_VERBS = frozenset(
    {
        "worry", "forget", "mind", "hesitate", "know", "think", "care", "bother", "apologise",
        "apologize", "feel", "love", "like", "let", "quit", "fear", "doubt", "lose", "panic",
        "stress", "regret", "wish", "hope", "believe", "imagine", "give", "miss", "settle",
        "underestimate", "blame", "dwell",
    }
)  # fmt: skip
#: Phrasal verbs of encouragement ("give up", "back down"): (lemma, particle).
NOT_RULE_PHRASALS = frozenset({("give", "up"), ("back", "down"), ("look", "back")})
#: Verbs that are rules only with their particle or object ("give examples" is, "give up" not).
OBJECT_RULE_VERBS = frozenset({"give"})
#: Adjectives after "don't be" / "never be" that describe feelings, not how to do things.
FEELING_ADJECTIVES = frozenset(
    {
        "afraid", "scared", "sorry", "shy", "sad", "nervous", "worried", "ashamed", "upset",
        "discouraged", "hard", "embarrassed", "stranger", "down", "frightened", "stressed",
    }
)  # fmt: skip
#: Second-person words: a rule "about you" ("don't limit yourself") is advice, not a request.
SECOND_PERSON = frozenset({"you", "your", "yours", "yourself", "yourselves"})
#: First-person words: the speaker is who a request serves ("when I ask", "for me").
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours"})
#: Words that make a request standing rather than one-off ("make sure to ALWAYS cite sources").
STANDING_MARKERS = frozenset(
    {"always", "never", "whenever", "default", "henceforth", "forward", "future", "anymore"}
)
#: Multi-word standing markers, matched on the lower-cased sentence.
STANDING_PHRASES = ("every time", "each time", "from now on", "for all", "in every", "by default")
#: Verbs of preferring: "I prefer Excel", "we favour short meetings".
PREFER_VERBS = frozenset({"prefer", "favour", "favor"})
#: Mental or feeling verbs: "I always feel …", "I never thought …" narrate, they are not habits.
MENTAL_VERBS = frozenset(
    {
        "feel", "think", "know", "want", "wonder", "worry", "look", "dream", "wish", "hope",
        "imagine", "expect", "realise", "realize", "thought", "mind", "love", "like", "enjoy",
        "remember", "forget", "say", "tell", "hear", "see", "ask", "do", "be", "have", "get",
        "try", "decide", "find", "turn", "meet", "need",
    }
)  # fmt: skip
#: Subordinators that put a clause under another one ("like I prefer", "if I always …").
SUBORDINATORS = frozenset({"if", "whether", "when", "like", "as", "unless", "because", "since"})
#: Subordinators of a condition a rule applies under ("… when I ask about deadlines").
CONDITION_MARKERS = frozenset({"when", "whenever", "if", "while"})
#: Pronouns that need an antecedent: "I prefer its simplicity" says nothing alone.
ANAPHORA = frozenset(
    {"it", "its", "this", "that", "these", "those", "them", "they", "their", "one", "ones"}
)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_LEAD = _rx(r"^(?:(?:please|also|and|so|ok(?:ay)?|oh|one more thing|btw)\b[,:]?\s+)+")


_STANDING_START = _rx(r"^(?:from now on|going forward|in the future|in future|henceforth)\b")


_INSTRUCTION = _rx(
    r"^(?:always|never|don't|do not|make sure (?:to|that|you)|be sure to|stop|avoid)\b|"
    r"^(?:i want you to|i'd like you to always|i would like you to always)\b"
)


_WEAK_INSTRUCTION = _rx(r"^(?:use|keep|only|include|format|write|answer|respond|reply)\b")


_STANDING_MARKER = _rx(
    r"\b(?:always|from now on|every time|whenever|for all|in every|going forward|by default)\b"
)


_NOT_INSTRUCTION = _rx(
    r"^(?:don't|do not|never) (?:worry|forget|mind|hesitate|get me wrong|know|think|"
    r"care|bother|be sorry|apologi[sz]e)\b|^never mind\b|^stop (?:by|in)\b"
)


_PREFERENCE = _rx(
    r"\b(?:i|we) (?:really |still |strongly |generally |usually |also |now )?"
    r"(?:prefer|favou?r)\b|"
    r"\b(?:i|we)(?:'d| would) (?:much |really |still )?(?:prefer|rather)\b|"
    r"\bmy (?:strong |personal |general )?preference (?:is|would be)\b|"
    r"\b(?:i|we) (?:always|never) (?!(?:thought|knew|wanted|expected|imagined|realized|"
    r"realised|felt|mind)\b)\w+"
)


_NOT_SUBJECT = _rx(
    r"\b(?:if|whether|when|unless|do|does|did|would|should|could|can|will|may|might|"
    r"why|how|what|which)\s+$"
)


_CLAUSE_END = _rx(
    r",\s+(?=(?:can|could|would|will|how|what|which|why|so|but|because|and (?:i|we) "
    r"(?:want|need|am|'m|have)|considering|is there|do you)\b)|;\s+|\s+because\s+"
)


_CHANGE = _rx(
    r"\b(?:(?<!for )now|instead|anymore|any more|no longer|from now on|going forward|"
    r"switch(?:ed|ing)?|changed my mind|actually|these days|rather than before)\b"
)


_NEGATED = _rx(r"\b(?:never|don't|do not|no longer|stop|avoid|not anymore)\b")


#: A purpose clause ("… within 10 days to avoid delays", "… so I don't forget") says why, not
#: what: its negation is not the statement's polarity.
_PURPOSE = _rx(
    r"\b(?:(?:in order |so as )?to (?:avoid|stop|prevent)|so(?: that)? (?:i|we|it|they|you) "
    r"(?:don't|do not|won't|never|can't))\b.*$"
)


#: Where a sentence that ends in "?" turns from saying to asking ("I prefer Excel, can you
#: help me …?"): what comes before is a statement.
_ASKING = _rx(
    r",\s+(?:so\s+|and\s+|but\s+)?(?=(?:can|could|would|will|do|does|is|are|how|what|which|"
    r"why|should|any)\b)"
)


#: The rule words before an instruction's verb, removed before its body is parsed.
_OPENER = _rx(
    r"^(?:(?:always|never|don't|do not|don't ever|do not ever|never ever)\s+|"
    r"make sure (?:to |that )?|be sure to |i want you to |i'd like you to (?:always )?|"
    r"i would like you to (?:always )?)"
)


#: Openers that make an instruction standing by themselves ("never …", "don't …").
_INHERENTLY_STANDING = _rx(r"^(?:always|never|don't|do not|stop|avoid|i want you to)\b")


_COMPLEMENTS = frozenset(
    {"dobj", "dative", "prep", "xcomp", "ccomp", "acomp", "attr", "oprd", "advcl", "agent",
     "npadvmod", "obj", "iobj"}
)  # fmt: skip


_EMPTY_ADVERBS = frozenset({"always", "never", "ever", "just", "really", "also", "not", "n't"})


#: The words put before an instruction's body: a modal forces the base-form verb reading.
SHOULD = ("You", "should")


@dataclass(frozen=True)
class StandingRules:
    """The standing-statement rules of one language (defaults: English). Without them no
    statement is taken for a standing instruction or preference."""

    #: Verbs of feeling or encouragement: "don't worry" is no rule.
    not_rule_verbs: frozenset[str] = NOT_RULE_VERBS
    #: Phrasal verbs of encouragement ("give up").
    not_rule_phrasals: frozenset[tuple[str, str]] = NOT_RULE_PHRASALS
    #: Rules only with their object ("give examples").
    object_rule_verbs: frozenset[str] = OBJECT_RULE_VERBS
    #: "Don't be sad": no rule.
    feeling_adjectives: frozenset[str] = FEELING_ADJECTIVES
    #: The assistant addressed.
    second_person: frozenset[str] = SECOND_PERSON
    #: The speaker, whom a request serves.
    first_person: frozenset[str] = FIRST_PERSON
    #: Words that make a rule standing ("always").
    standing_markers: frozenset[str] = STANDING_MARKERS
    #: Phrases that do ("from now on").
    standing_phrases: tuple[str, ...] = STANDING_PHRASES
    #: Verbs of preference.
    prefer_verbs: frozenset[str] = PREFER_VERBS
    #: Verbs whose clause is a thought, not a rule.
    mental_verbs: frozenset[str] = MENTAL_VERBS
    #: Open a subordinate clause.
    subordinators: frozenset[str] = SUBORDINATORS
    #: Open the condition a rule applies under ("when I ask about X").
    condition_markers: frozenset[str] = CONDITION_MARKERS
    #: Words that point back, never a condition's topic.
    anaphora: frozenset[str] = ANAPHORA
    #: Fillers before the statement ("please", "also").
    lead: re.Pattern[str] = _LEAD
    #: "From now on …": standing.
    standing_start: re.Pattern[str] = _STANDING_START
    #: Instruction openers ("always", "make sure to").
    instruction: re.Pattern[str] = _INSTRUCTION
    #: Imperatives that instruct only when standing ("use …").
    weak_instruction: re.Pattern[str] = _WEAK_INSTRUCTION
    #: Markers anywhere in the sentence ("every time").
    standing_marker: re.Pattern[str] = _STANDING_MARKER
    #: Imperatives that are no rule ("don't worry").
    not_instruction: re.Pattern[str] = _NOT_INSTRUCTION
    #: First-person preferences ("I prefer", "I'd rather").
    preference: re.Pattern[str] = _PREFERENCE
    #: A subordinate or question before "I prefer": not a statement.
    not_subject: re.Pattern[str] = _NOT_SUBJECT
    #: Where the statement's clause ends.
    clause_end: re.Pattern[str] = _CLAUSE_END
    #: A changed preference ("now", "instead").
    change: re.Pattern[str] = _CHANGE
    #: Negation ("never", "no longer").
    negated: re.Pattern[str] = _NEGATED
    #: A purpose clause, whose negation is not the statement's.
    purpose: re.Pattern[str] = _PURPOSE
    #: Where a sentence turns from saying to asking.
    asking: re.Pattern[str] = _ASKING
    #: Rule words before an instruction's verb.
    opener: re.Pattern[str] = _OPENER
    #: Openers standing by themselves ("never …").
    inherently_standing: re.Pattern[str] = _INHERENTLY_STANDING
    #: Complements that close an instruction's body.
    complements: frozenset[str] = _COMPLEMENTS
    #: Adverbs an instruction's body drops.
    empty_adverbs: frozenset[str] = _EMPTY_ADVERBS
    #: Habit adverbs: "I always use X" states a standing preference.
    habit_adverbs: frozenset[str] = frozenset({"always", "never"})
    #: Subordinators of a reason, not of a condition.
    reason_markers: frozenset[str] = frozenset({"because", "since"})
    #: Markers of an adverbial clause that ends the statement ("…, because …").
    clause_breakers: frozenset[str] = frozenset({"because", "since", "so", "as", "though", "while"})
    #: The words a rule is rephrased with ("You should …").
    should: tuple[str, ...] = SHOULD
