"""The names a query may use for a space's speakers: the exported name itself, and the given
name inside it when the export holds more (a full name "Jon Snow", a handle "jon.snow42",
"jon_snow", "JonSnow"). Chats are exported under account names that people do not use when
they talk or ask about each other; an alias that could name two speakers is dropped."""

from __future__ import annotations

import re
from collections.abc import Iterable

_LETTERS = re.compile(r"[^\W\d_]+")

#: The shortest given name taken as an alias (shorter parts are initials or noise).
MIN_ALIAS_CHARS = 3

#: Parts of an account name that are not a person's name.
_NOT_NAMES = frozenset(
    {"the", "mr", "mrs", "ms", "dr", "user", "assistant", "admin", "bot", "official"}
    | {"real", "its", "im", "iam", "my"}
)


def name_parts(speaker: str) -> list[str]:
    """The words of ``speaker``: runs of letters, cut where a lower-case letter meets an
    upper-case one ("jon.snow42" → ["jon", "snow"], "JonSnow" → ["Jon", "Snow"])."""
    parts: list[str] = []
    for run in _LETTERS.findall(speaker):
        start = 0
        for i in range(1, len(run)):
            if run[i - 1].islower() and run[i].isupper():
                parts.append(run[start:i])
                start = i
        parts.append(run[start:])
    return parts


def speaker_forms(speakers: Iterable[str]) -> dict[str, str]:
    """Every form a query may name a speaker by (case-folded, inner whitespace single) →
    that speaker as exported. Each speaker is named by itself; a speaker whose name has
    several words (or is a handle) also by its words joined with spaces and by its first
    word, when no other speaker claims that form."""
    names = {" ".join(s.split()): s for s in speakers if s.strip()}
    forms: dict[str, str] = {n.casefold(): s for n, s in names.items()}
    claims: dict[str, set[str]] = {}
    for name, speaker in names.items():
        parts = [p for p in name_parts(name) if p.casefold() not in _NOT_NAMES]
        if not parts:
            continue
        candidates = {" ".join(parts).casefold()}
        if len(parts[0]) >= MIN_ALIAS_CHARS:
            candidates.add(parts[0].casefold())
        for form in candidates - {name.casefold()}:
            claims.setdefault(form, set()).add(speaker)
    for form, owners in claims.items():
        if len(owners) == 1 and form not in forms:
            forms[form] = next(iter(owners))
    return forms
