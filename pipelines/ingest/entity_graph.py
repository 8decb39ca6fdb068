"""Which entity candidates become graph entities, and which co-occurrences a memory adds.

The extractor (:mod:`pipelines.ingest.entities`) proposes candidates per memory; this module
decides against the space, so that the entity graph grows linearly with the memories and
stays made of things that matter there. Pure: the caller reads the space's state for the
batch's keys and writes the plan in the same transaction.

**Promotion.** A candidate becomes an ``Entity`` when

* the key is already an entity of the space (every later mention counts), or
* its kind is a name spaCy tags reliably in prose (:attr:`EntityConfig.first_sighting_labels`:
  people, places, nationalities, facilities, events): kept at first sighting, or
* it has been seen in ``promote_at`` memories of the space (default 2: identifiers, products,
  organisations and other terms are kept when they recur). Sightings below that wait as
  ``EntityCandidate`` nodes that remember the first memory and its mention count; on
  promotion that memory gets its ``MENTIONS`` edge too. A candidate seen only once stays a
  candidate (bounded per space by :attr:`EntityConfig.max_candidates`, oldest dropped first).

**Co-occurrence.** Each memory pairs only its ``max_paired`` most salient entities
(``MENTIONS.paired``): salience = mentions in the memory × ``ln(1 + N / df)`` (N memories in
the space, df the memories mentioning the entity; a rare entity says more about the memory
than one mentioned everywhere), ties by key. A memory therefore adds at most
``max_paired·(max_paired-1)/2`` pairs, merged into ``CO_OCCURS.weight`` as counts: edges grow
linearly with memories. Retroactive mentions (a promoted candidate's first memory) are not
paired: that memory's pairs were chosen when it was written.

**Aliases.** A key the ``entity_merge`` job merged into another entity ("mel" into "melanie")
is written as that entity (:func:`resolve_aliases`), before any of the above.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import combinations
from typing import Any

from pipelines.ingest.config import EntityConfig
from pipelines.ingest.entities import EntityMention

__all__ = [
    "Candidate",
    "EntityPlan",
    "MemoryMentions",
    "plan_entities",
    "resolve_aliases",
    "salience",
]


@dataclass(frozen=True, slots=True)
class MemoryMentions:
    """A memory being stored, with its extracted candidates."""

    id: str
    event_time: datetime
    mentions: Sequence[EntityMention]


@dataclass(frozen=True, slots=True)
class Candidate:
    """An ``EntityCandidate`` of the space: seen before, not (yet) an entity."""

    key: str
    memory: str
    """The first memory it was seen in."""
    count: int
    """Its mentions in that memory."""
    sightings: int
    seen: datetime


@dataclass
class EntityPlan:
    """Everything one batch writes about entities (rows for the ``ingest/*`` statements)."""

    entities: list[dict[str, Any]] = field(default_factory=list)
    mentions: list[dict[str, Any]] = field(default_factory=list)
    pairs: dict[tuple[str, str], int] = field(default_factory=dict)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    promoted: list[str] = field(default_factory=list)
    """Candidate keys promoted by this batch (their candidate nodes are deleted)."""

    def keys_of(self, memory: str) -> list[str]:
        """Entity keys a memory of the batch mentions (after promotion)."""
        return [m["key"] for m in self.mentions if m["memory"] == memory]


def resolve_aliases(
    mentions: Sequence[EntityMention], aliases: Mapping[str, tuple[str, str, str]]
) -> list[EntityMention]:
    """Mentions with alias keys written as their canonical entity's (``aliases``: alias key
    -> canonical key, name, kind; the ``entity_merge`` job's redirects); a memory naming both
    forms gets one mention, counts added. Order of first appearance is kept."""
    if not aliases or not any(m.key in aliases for m in mentions):
        return list(mentions)
    merged: dict[str, EntityMention] = {}
    for m in mentions:
        if m.key in aliases:
            key, name, kind = aliases[m.key]
            m = EntityMention(name=name, key=key, kind=kind, count=m.count)
        seen = merged.get(m.key)
        if seen is None:
            merged[m.key] = m
        else:
            merged[m.key] = EntityMention(seen.name, seen.key, seen.kind, seen.count + m.count)
    return list(merged.values())


def salience(count: int, memory_frequency: int, memories: int) -> float:
    """Mentions in the memory × ``ln(1 + N / df)`` (module docstring)."""
    return count * math.log1p(max(memories, 1) / max(memory_frequency, 1))


def _promoted_keys(
    batch: Mapping[str, list[tuple[MemoryMentions, EntityMention]]],
    known: Mapping[str, int],
    candidates: Mapping[str, Candidate],
    cfg: EntityConfig,
) -> set[str]:
    keep = set()
    for key, seen in batch.items():
        earlier = candidates[key].sightings if key in candidates else 0
        if (
            key in known
            or any(m.kind in cfg.first_sighting_labels for _, m in seen)
            or earlier + len(seen) >= cfg.promote_at
        ):
            keep.add(key)
    return keep


def plan_entities(
    memories: Sequence[MemoryMentions],
    known: Mapping[str, int],
    candidates: Mapping[str, Candidate],
    space_memories: int,
    cfg: EntityConfig,
) -> EntityPlan:
    """The entity writes of a batch of new memories (module docstring).

    ``known`` maps the batch's keys that are entities of the space to the number of memories
    mentioning them; ``candidates`` holds the batch's keys that wait as candidates;
    ``space_memories`` counts the space's memories including this batch.
    """
    batch: dict[str, list[tuple[MemoryMentions, EntityMention]]] = {}
    for mem in memories:
        for m in mem.mentions:
            batch.setdefault(m.key, []).append((mem, m))
    keep = _promoted_keys(batch, known, candidates, cfg)
    plan = EntityPlan()
    ids = {mem.id for mem in memories}
    frequency: dict[str, int] = {}
    for key in sorted(keep):
        seen = batch[key]
        cand = candidates.get(key)
        retro = cand is not None and key not in known and cand.memory not in ids
        frequency[key] = known.get(key, 0) + len(seen) + (1 if retro else 0)
        times = [mem.event_time for mem, _ in seen] + ([cand.seen] if retro and cand else [])
        plan.entities.append(
            {
                "key": key,
                "name": seen[0][1].name,
                "kind": seen[0][1].kind,
                "count": sum(m.count for _, m in seen) + (cand.count if retro and cand else 0),
                "memories": len(seen) + (1 if retro else 0),
                "first_seen": min(times),
                "last_seen": max(times),
            }
        )
        if cand is not None and key not in known:
            plan.promoted.append(key)
            if retro:
                plan.mentions.append(
                    {"memory": cand.memory, "key": key, "count": cand.count, "paired": False}
                )
    for mem in memories:
        _pair_memory(mem, keep, frequency, space_memories, cfg, plan)
    for key in sorted(set(batch) - keep):
        mem, m = batch[key][0]
        plan.candidates.append(
            {
                "key": key,
                "name": m.name,
                "kind": m.kind,
                "memory": mem.id,
                "count": m.count,
                "sightings": len(batch[key]),
                "seen": mem.event_time,
            }
        )
    return plan


def _pair_memory(
    mem: MemoryMentions,
    keep: set[str],
    frequency: Mapping[str, int],
    space_memories: int,
    cfg: EntityConfig,
    plan: EntityPlan,
) -> None:
    kept = [m for m in mem.mentions if m.key in keep]
    ranked = sorted(
        kept, key=lambda m: (-salience(m.count, frequency[m.key], space_memories), m.key)
    )
    paired = {m.key for m in ranked[: cfg.max_paired]}
    for m in kept:
        plan.mentions.append(
            {"memory": mem.id, "key": m.key, "count": m.count, "paired": m.key in paired}
        )
    for a, b in combinations(sorted(paired), 2):
        plan.pairs[(a, b)] = plan.pairs.get((a, b), 0) + 1
