"""English word lists of standing-statement and fact extraction, in one place (lemmas, lower case).

Each list says in one line what it is for; grammar (spaCy's tags and dependencies) does the rest
(:mod:`pipelines.ingest.standing_parse`, :mod:`pipelines.ingest.fact_parse`).
"""

from __future__ import annotations

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
#: Words that open a dependent clause: "Since I was 17 or so" means nothing without its turn.
CLAUSE_OPENERS = frozenset(
    {
        "since", "because", "cause", "when", "if", "although", "though", "while", "unless",
        "until", "as", "after", "before", "like", "whether", "whereas", "so", "than", "which",
        "who", "that", "where",
    }
)  # fmt: skip
#: Time words whose meaning depends on when the turn was said ("yesterday", "last week").
RELATIVE_TIME = frozenset(
    {"yesterday", "today", "tonight", "tomorrow", "ago", "recently", "lately", "currently"}
)
#: Words after "last", "next" or "this" that make a relative time ("last week", "this month").
RELATIVE_UNITS = frozenset(
    {"week", "weekend", "month", "year", "night", "morning", "evening", "afternoon", "summer",
     "winter", "spring", "fall", "autumn", "semester", "monday", "tuesday", "wednesday",
     "thursday", "friday", "saturday", "sunday"}
)  # fmt: skip
