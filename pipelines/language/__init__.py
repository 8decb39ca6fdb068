"""Every language-specific rule in one place: word lists, phrasings and patterns, by concept.

:func:`current` is the active rule set; a consumer reads its rules from it at call time, so
:func:`configure` (``MNEMOGRAPH_LANGUAGE_RULES=english|off``) switches all of them at once.
With the rules off every pattern matches nothing and every word list is empty: intents fall
back to the default, no statement is taken for a standing instruction or a fact by its
phrasing, no time expression is resolved, and every word of a query is searched for.
See docs/language.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from pipelines.language.base import blank
from pipelines.language.claims import ClaimRules
from pipelines.language.facts import FactRules
from pipelines.language.gate import GateRules
from pipelines.language.intents import IntentRules
from pipelines.language.lexicon import LexiconRules
from pipelines.language.names import NameRules
from pipelines.language.queries import QueryRules
from pipelines.language.standing import StandingRules
from pipelines.language.talk import TalkRules
from pipelines.language.time import TimeRules

LanguageName = Literal["english", "off"]
LANGUAGES: tuple[LanguageName, ...] = ("english", "off")


@dataclass(frozen=True)
class Language:
    """One language's rule sets, by concept."""

    name: str
    queries: QueryRules = field(default_factory=QueryRules)
    intents: IntentRules = field(default_factory=IntentRules)
    time: TimeRules = field(default_factory=TimeRules)
    names: NameRules = field(default_factory=NameRules)
    lexicon: LexiconRules = field(default_factory=LexiconRules)
    talk: TalkRules = field(default_factory=TalkRules)
    standing: StandingRules = field(default_factory=StandingRules)
    facts: FactRules = field(default_factory=FactRules)
    claims: ClaimRules = field(default_factory=ClaimRules)
    gate: GateRules = field(default_factory=GateRules)


ENGLISH = Language("english")
OFF = Language(
    "off",
    queries=blank(QueryRules()),
    intents=blank(IntentRules()),
    time=blank(TimeRules()),
    names=blank(NameRules()),
    lexicon=blank(LexiconRules()),
    talk=blank(TalkRules()),
    standing=blank(StandingRules()),
    facts=blank(FactRules()),
    claims=blank(ClaimRules()),
    gate=blank(GateRules()),
)

_BY_NAME: dict[str, Language] = {"english": ENGLISH, "off": OFF}
_active: list[Language] = [
    _BY_NAME.get(os.environ.get("MNEMOGRAPH_LANGUAGE_RULES", "english"), ENGLISH)
]


def current() -> Language:
    """The active rule set (``MNEMOGRAPH_LANGUAGE_RULES`` at start, else :func:`configure`'s)."""
    return _active[0]


def configure(name: LanguageName) -> Language:
    """Make ``name``'s rules the active ones, for the whole process; returns them."""
    if name not in _BY_NAME:
        raise ValueError(f"language rules must be one of {', '.join(LANGUAGES)}, not {name!r}")
    _active[0] = _BY_NAME[name]
    return _active[0]
