"""When one person entity is another's short form or misspelling (pure; the job is
:mod:`pipelines.consolidate.entity_merge`).

An alias ``A`` resolves to a canonical entity ``C`` when all of these hold:

* **string form**: ``A``'s key is a proper prefix of ``C``'s first word of at least
  ``min_prefix`` characters ("mel" / "melanie", "caro" / "caroline"), or within one edit of
  such a prefix or of the whole word (``A`` at least ``min_fuzzy`` characters: "mell" /
  "melanie", "carolin" / "caroline");
* **kinds**: ``C`` is a PERSON, ``A`` a PERSON or a kind the recogniser confuses with it;
* **direction**: ``C`` is a speaker, or mentioned more often than ``A`` (five times as often
  for a one-edit form: a typo is rare, "Joanne" beside "Joanna" is another person); ``A`` is
  not itself a speaker;
* **unique**: ``C`` is the only entity ``A`` fits that way (no merge of "jo" into "joanna"
  when "john" is there too), or the only speaker among them and five times as mentioned as
  the next;
* **support**, at least one of: ``C`` is a speaker of the space and ``A`` is said mostly by
  the other speakers (people address each other by short forms); ``A`` and ``C`` share
  co-occurring entities (Jaccard of their neighbourhoods at least ``min_neighbour_jaccard``).

The evidence is kept with the merge (its reason) so that a person can judge and undo it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["AliasEvidence", "EntityProfile", "alias_pairs", "edit_distance", "form_match"]

PERSON = "PERSON"
CONFUSED_WITH_PERSON = frozenset({"PERSON", "ORG", "NORP", "GPE"})


@dataclass(frozen=True, slots=True)
class EntityProfile:
    """What the evidence needs to know about one entity of the space."""

    key: str
    name: str
    kind: str
    mentions: int
    neighbours: frozenset[str] = frozenset()
    by_speaker: Mapping[str, int] = field(default_factory=dict)
    """Mentions per speaker (case-folded) of the memories mentioning it."""


@dataclass(frozen=True, slots=True)
class AliasEvidence:
    alias: str
    canonical: str
    form: str
    """``prefix``, ``fuzzy-prefix`` or ``misspelling``."""
    addressed: float
    """Share of the alias's mentions said by speakers other than the canonical (when the
    canonical is a speaker; else 0)."""
    neighbour_jaccard: float
    score: float

    @property
    def reason(self) -> str:
        parts = [f"{self.form} of {self.canonical!r}"]
        if self.addressed:
            parts.append(f"said by others to speaker {self.canonical!r} ({self.addressed:.0%})")
        if self.neighbour_jaccard:
            parts.append(f"shared neighbours (Jaccard {self.neighbour_jaccard:.2f})")
        return f"{self.alias!r}: " + "; ".join(parts)


def edit_distance(a: str, b: str, limit: int = 2) -> int:
    """Optimal-string-alignment distance (insert, delete, substitute, swap neighbours),
    capped at ``limit + 1``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return min(prev[-1], limit + 1)


def form_match(alias: str, canonical: str, min_prefix: int = 3, min_fuzzy: int = 4) -> str | None:
    """How ``alias`` is a short form or misspelling of ``canonical``'s first word, or None."""
    if " " in alias or not alias.isalpha():
        return None
    first = canonical.split()[0]
    if alias == first or len(alias) >= len(first) + 2:
        return None
    if len(alias) >= min_prefix and len(alias) < len(first) and first.startswith(alias):
        return "prefix"
    if len(alias) >= min_fuzzy and alias[0] == first[0]:
        if len(alias) < len(first) and edit_distance(alias, first[: len(alias)], 1) <= 1:
            return "fuzzy-prefix"
        if len(first) >= 5 and edit_distance(alias, first, 1) <= 1:
            return "misspelling"
    return None


def _direction(a: EntityProfile, c: EntityProfile, form: str, speakers: frozenset[str]) -> bool:
    """Whether ``c`` is the name ``a`` stands for: a speaker's own name always is; otherwise
    the more mentioned, and for a one-edit form (a typo) five times as mentioned."""
    if c.key in speakers:
        return True
    if form == "prefix":
        return c.mentions > a.mentions
    return c.mentions >= 5 * a.mentions


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def alias_pairs(
    entities: Sequence[EntityProfile],
    speakers: frozenset[str],
    blocked: frozenset[tuple[str, str]] = frozenset(),
    min_prefix: int = 3,
    min_fuzzy: int = 4,
    min_addressed: float = 0.5,
    min_neighbour_jaccard: float = 0.2,
) -> list[AliasEvidence]:
    """The alias -> canonical merges the evidence supports (module docstring), ordered by
    alias key. ``blocked``: ``(alias, canonical)`` pairs whose merge was undone."""
    persons = [e for e in entities if e.kind == PERSON]
    by_initial: dict[str, list[EntityProfile]] = defaultdict(list)
    for c in persons:
        by_initial[c.key[:1]].append(c)
    out: list[AliasEvidence] = []
    for a in sorted(entities, key=lambda e: e.key):
        if a.kind not in CONFUSED_WITH_PERSON or a.key in speakers:
            continue
        fits = [
            (c, form)
            for c in by_initial.get(a.key[:1], ())
            if c.key != a.key
            and (form := form_match(a.key, c.key, min_prefix, min_fuzzy)) is not None
            and _direction(a, c, form, speakers)
        ]
        if not fits:
            continue
        fits.sort(key=lambda f: (-f[0].mentions, f[0].key))
        c, form = fits[0]
        # Ambiguous unless the only fit, or the one speaker among the fits and far more
        # mentioned than the next ("mel" beside "melanie" the speaker and "mell" the typo).
        if len(fits) > 1 and not (
            c.key in speakers
            and not any(f.key in speakers for f, _ in fits[1:])
            and c.mentions >= 5 * fits[1][0].mentions
        ):
            continue
        if (a.key, c.key) in blocked:
            continue
        said = sum(a.by_speaker.values())
        addressed = 0.0
        if c.key in speakers and said:
            addressed = sum(n for s, n in a.by_speaker.items() if s != c.key) / said
        jaccard = _jaccard(a.neighbours - {c.key}, c.neighbours - {a.key})
        supported_by = (addressed if addressed >= min_addressed else 0.0,
                        jaccard if jaccard >= min_neighbour_jaccard else 0.0)  # fmt: skip
        if not any(supported_by):
            continue
        out.append(
            AliasEvidence(
                alias=a.key,
                canonical=c.key,
                form=form,
                addressed=round(supported_by[0], 4),
                neighbour_jaccard=round(supported_by[1], 4),
                score=round(max(supported_by), 4),
            )
        )
    return out
