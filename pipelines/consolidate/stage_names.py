"""Names of community stages: their most distinctive entities, never two stages alike.

An entity names a stage by tf-idf against the whole space: ``tf`` (the stage's memories that
mention it) × ``ln(1 + N / df)`` (``N`` active memories of the space, ``df`` the space's
memories mentioning it), so that a stage about pottery is named after "Pottery Club", not
after a friend's name that every stage mentions. Stages are named largest first; each takes as
its lead the best entity that leads no other stage yet, then its next best ones, so no two
stages share a name while distinct entities remain. Pure: the job reads the terms
(``consolidate/community_name_terms``) and writes the names.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Term", "stage_names", "tf_idf"]


@dataclass(frozen=True, slots=True)
class Term:
    key: str
    name: str
    tf: int
    df: int


def tf_idf(term: Term, memories: int) -> float:
    return term.tf * math.log1p(max(memories, 1) / max(term.df, 1))


def stage_names(
    terms: Mapping[str, Sequence[Term]],
    sizes: Mapping[str, int],
    memories: int,
    k: int,
) -> dict[str, str]:
    """A name per stage id of ``terms`` (module docstring): ``"topic: A, B, C"`` with at most
    ``k`` entities; ``"topic <id>"`` for a stage without entities (or ``k`` = 0)."""
    out: dict[str, str] = {}
    leads: set[str] = set()
    used: set[str] = set()
    for sid in sorted(terms, key=lambda s: (-sizes.get(s, 0), s)):
        ranked = sorted(terms[sid], key=lambda t: (-tf_idf(t, memories), t.key))
        if not ranked or k <= 0:
            out[sid] = "topic " + sid.split(":", 1)[-1]
            continue
        lead = next((t for t in ranked if t.key not in leads), ranked[0])
        chosen = [lead, *[t for t in ranked if t.key != lead.key][: k - 1]]
        name = "topic: " + ", ".join(t.name for t in chosen)
        # equal lists (few entities everywhere): widen with the next entity not shown yet
        extra = iter(t for t in ranked if t not in chosen)
        while name in used and (more := next(extra, None)) is not None:
            chosen.append(more)
            name = "topic: " + ", ".join(t.name for t in chosen)
        leads.add(lead.key)
        used.add(name)
        out[sid] = name
    return out
