"""How a recall query is read: the words that are not searched for, and the phrasings that say who
is asked, whether a task is asked for, and which words ask *for* something rather than about it."""

from __future__ import annotations

import re
from dataclasses import dataclass


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Common English function words plus question words and conversational filler.
STOP_WORDS: frozenset[str] = _words(
    """
    a about above across after again against all almost along already also although am
    among an and another any anybody anyone anything anyway anywhere are aren't around as
    at be became because been before being below beside besides between beyond both but by
    can can't cannot could couldn't did didn't do does doesn't doing don't done down during
    each either else enough etc even ever every everybody everyone everything everywhere
    few for from further get gets getting give given go goes going gone got had hadn't has
    hasn't have haven't having he he'd he'll he's her here here's hers herself him himself
    his how how's however i i'd i'll i'm i've if in into is isn't it it's its itself just
    least less let let's like likely many may maybe me might mine more most much must my
    myself neither never no nobody none nor not nothing now nowhere of off often oh ok okay
    on once one only onto or other others otherwise our ours ourselves out over own per
    perhaps please quite rather really same say says said shall she she'd she'll she's
    should shouldn't since so some somebody someone something sometimes somewhere still
    such than that that's the their theirs them themselves then there there's these they
    they'd they'll they're they've thing things this those though through thus to too
    toward towards under until up upon us very via was wasn't we we'd we'll we're we've
    were weren't what what's whatever when when's whenever where where's whereas wherever
    whether which while who who's whoever whole whom whose why why's will with within
    without won't would wouldn't yes yet you you'd you'll you're you've your yours yourself
    yourselves
    hey hi hello thanks thank know remember recall tell think guess wonder stuff kind sort
    lot lots bit actually basically anymore always user assistant mention mentioned talk talked
    describe explain list summarize summarise summary overview recap common together
    happen happens happened happening
    """
)


#: Relative-time words: resolved by :mod:`~pipelines.recall.time_expressions`, not searched for.
#: Dropped only in lower case (so "Mother's Day" or "New Year" survive).
TIME_WORDS: frozenset[str] = _words(
    """
    recently lately recent current currently latest today yesterday tomorrow tonight ago
    last past previous next week weeks weekend month months year years day days time times
    morning afternoon evening night earlier later
    """
)


_FIRST_PERSON_RE = re.compile(r"\b(?:i|me|my|mine|myself)\b", re.IGNORECASE)


_ASKS_ASSISTANT_RE = re.compile(
    r"\b(?:did|have|had)\s+you\b|\byou\s+(?:recommended|suggested|said|told|mentioned|"
    r"advised|proposed|helped|explained|outlined|gave|provided|showed)\b",
    re.IGNORECASE,
)


_TASK_RE = re.compile(
    r"\b(?:how\s+(?:do|can|could|should|would|might)\s+(?:i|we)|"
    r"(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:help|show|walk|explain|give|"
    r"provide|suggest|recommend|write|create|draft|review|tell\s+me\s+how)|"
    r"(?:help|show|walk|teach)\s+me\b|"
    r"(?:what|which)\b[^.?!]*\b(?:should|would\s+you\s+(?:suggest|recommend)|"
    r"do\s+you\s+(?:suggest|recommend))|"
    r"(?:what|which)\s+(?:are|is)\s+(?:some|the\s+(?:best|different))\b|"
    r"^\s*(?:please\s+)?(?:explain|describe|write|create|draft|suggest|recommend|list)\b)",
    re.IGNORECASE,
)


_PAST_RECORD_RE = re.compile(
    r"\b(?:did|have|had)\s+(?:i|we|you)\b|\b(?:i|we|you)\s+(?:said|mentioned|told|asked|"
    r"recommended|suggested|brought\s+up|discussed|talked)\b|"
    r"\b(?:our|these|previous|past)\s+(?:conversations?|discussions?|chats?|sessions?)\b",
    re.IGNORECASE,
)


_META_RE = re.compile(
    r"\b(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:give|provide|show|tell|walk)\s+"
    r"me(?:\s+through)?|(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:list|summari[sz]e|"
    r"recap|describe|outline)|(?:a|an|the)\s+(?:(?:comprehensive|complete|brief|short|"
    r"detailed|quick|clear|full)\s+)*(?:summary|overview|recap|list|rundown)\s+of|"
    r"in\s+(?:what|which)\s+order|in\s+(?:chronological\s+)?order|"
    r"(?:i|we|you)\s+(?:brought\s+up|mentioned|discussed|talked\s+about|raised)|"
    r"so\s+far|over\s+time)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class QueryRules:
    """The query rules of one language (defaults: English)."""

    #: Not searched for (function words, question words, filler). Without: every word is searched.
    stop_words: frozenset[str] = STOP_WORDS
    #: Resolved as time, not searched for (lower case only).
    time_words: frozenset[str] = TIME_WORDS
    #: The asker speaks of themself ("my sprint"): their own turns weigh more.
    first_person: re.Pattern[str] = _FIRST_PERSON_RE
    #: ... unless they ask what the other party said ("what did you recommend").
    asks_assistant: re.Pattern[str] = _ASKS_ASSISTANT_RE
    #: A request for help with a task ("How should I …"), not about the record.
    task: re.Pattern[str] = _TASK_RE
    #: ... unless it asks about the record ("did I", "our conversations").
    past_record: re.Pattern[str] = _PAST_RECORD_RE
    #: Words that ask *for* a summary or an order, stripped before searching.
    meta: re.Pattern[str] = _META_RE
