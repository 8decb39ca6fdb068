"""Names: the parts of an account name that are no one's name, and the greetings by which a
turn addresses someone by name ("Hey Mel!"), from which a speaker's everyday name is learned."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Parts of an account name that are not a person's name.
_NOT_NAMES = frozenset(
    {"the", "mr", "mrs", "ms", "dr", "user", "assistant", "admin", "bot", "official"}
    | {"real", "its", "im", "iam", "my"}
)


#: A turn that opens by greeting, thanking or answering someone by name: the name.
_OPENING = re.compile(
    r"^\W*(?:hey+|hi+|hiya|hello|heya|yo|morning|good\s+(?:morning|afternoon|evening|night)|"
    r"thanks|thank\s+you|thx|congrats|congratulations|wow|aw+|omg|oh|dear|bye|sorry|yes|no)"
    r"(?:\s+(?:so\s+much|again|there))?[\s,]+(?-i:([A-Z][^\W\d_]+))\s*(?:[,!.?;:)…]|$)",
    re.IGNORECASE,
)


#: What the graph's prefilter matches (Java regex): a turn that may open that way.
OPENING_PREFILTER = (
    r"(?is)^\W*(hey+|hi+|hiya|hello|heya|yo|morning|good\s+(morning|afternoon|evening|night)|"
    r"thanks|thank\s+you|thx|congrats|congratulations|wow|aw+|omg|oh|dear|bye|sorry|yes|no)\b.*"
)


@dataclass(frozen=True)
class NameRules:
    """The name rules of one language (defaults: English)."""

    #: Words of an account name that are not a name ("the", "official", "user").
    not_names: frozenset[str] = _NOT_NAMES
    #: A turn opening by addressing someone: the name (without: no name is learned).
    opening: re.Pattern[str] = _OPENING
    #: The same as a Java regex, which the graph's prefilter matches.
    opening_prefilter: str = OPENING_PREFILTER
