"""The names a query may use for a space's speakers: the exported name itself; the given name
inside it when the export holds more (a full name "Jon Snow", a handle "jon.snow42",
"jon_snow", "JonSnow"); and the names the others call a speaker by, learned from the turns
that open by addressing someone in a two-person session ("Hey Mel!", "Thanks, Caroline").
Chats are exported under account names (or numbers) that people do not use when they talk or
ask about each other. An alias that could name two speakers is dropped. The words are
:mod:`pipelines.language.names`'.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from pipelines.language import current
from pipelines.recall.config import DEFAULT_RECALL_CONFIG

_CFG = DEFAULT_RECALL_CONFIG

_LETTERS = re.compile(r"[^\W\d_]+")


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


def speaker_forms(
    speakers: Iterable[str],
    learned: Mapping[str, str] | None = None,
    min_alias_chars: int = _CFG.speaker_alias_min_chars,
) -> dict[str, str]:
    """Every form a query may name a speaker by (case-folded, inner whitespace single) → that
    speaker as exported. Each speaker is named by itself; a speaker whose name has
    several words (or is a handle) also by its words joined with spaces and by its first
    word (of ``min_alias_chars`` at least), when no other speaker claims that form; then
    by the ``learned`` names (:func:`learned_names`) no speaker is exported or known by."""
    names = {" ".join(s.split()): s for s in speakers if s.strip()}
    forms: dict[str, str] = {n.casefold(): s for n, s in names.items()}
    claims: dict[str, set[str]] = {}
    not_names = current().names.not_names
    for name, speaker in names.items():
        parts = [p for p in name_parts(name) if p.casefold() not in not_names]
        if not parts:
            continue
        candidates = {" ".join(parts).casefold()}
        if len(parts[0]) >= min_alias_chars:
            candidates.add(parts[0].casefold())
        for form in candidates - {name.casefold()}:
            claims.setdefault(form, set()).add(speaker)
    for form, owners in claims.items():
        if len(owners) == 1 and form not in forms:
            forms[form] = next(iter(owners))
    for form, speaker in (learned or {}).items():
        if form not in forms and " ".join(speaker.split()) in names:
            forms[form] = names[" ".join(speaker.split())]
    return forms


def addressed_name(text: str) -> str | None:
    """The name a turn opens by addressing ("Hey Mel! …" → "Mel"), or None."""
    rules = current().names
    match = rules.opening.match(text)
    if match is None:
        return None
    name = match.group(1)
    return None if name.casefold() in rules.not_names or len(name) < 2 else name


def learned_names(
    openings: Iterable[tuple[Sequence[str], str, str]],
    min_addresses: int = _CFG.speaker_name_min_addresses,
    min_share: float = _CFG.speaker_name_min_share,
) -> dict[str, str]:
    """Name (case-folded) → the speaker others call by it, from ``(speakers of the session,
    speaker, text)`` of turns that may open by addressing someone: in a two-person session
    the name addresses the other one. A name counts when it addressed one speaker at least
    ``min_addresses`` times and in ``min_share`` of its uses."""
    counts: dict[str, Counter[str]] = {}
    for session_speakers, speaker, text in openings:
        others = {s for s in session_speakers if s and s != speaker}
        name = addressed_name(text) if len(others) == 1 else None
        if name is not None:
            counts.setdefault(name.casefold(), Counter())[others.pop()] += 1
    out: dict[str, str] = {}
    for name, by_speaker in counts.items():
        speaker, n = by_speaker.most_common(1)[0]
        if n >= min_addresses and n >= min_share * sum(by_speaker.values()):
            out[name] = speaker
    return out


def opening_prefilter() -> str:
    """What the graph's prefilter matches (Java regex): a turn that may open by addressing
    someone, in the active language."""
    return current().names.opening_prefilter
