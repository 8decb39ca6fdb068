"""The recalls an assembly makes: over the whole space, and within the current stage.

Whole-space recall (:func:`space_recall`) is made at most once per assembly: stage inference
votes with it, Phase 2 ranks other stages' memories by it, and flat mode packs it.  Phase 1
(:func:`own_stage`) recalls within the current stage, oversampled, and orders the pool by
greedy MMR so that the head of the order covers the stage rather than repeating one thing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pipelines.assemble.items import Evidence, Item, Stage, memory_item
from pipelines.assemble.run import Run
from pipelines.recall.intent import Intent
from pipelines.recall.request import MAX_K, PresetName
from pipelines.recall.selection import mmr_select
from pipelines.recall.service import RecallFilters, RecallHit, RecallRequest

__all__ = [
    "PHASE_PRESET",
    "SPACE_PRESET",
    "SpaceRecall",
    "own_stage",
    "space_recall",
    "valid",
    "valid_ids",
]

PHASE_PRESET: PresetName = "full"
"""Preset of Phase 1's recall within the current stage."""
SPACE_PRESET: PresetName = "full"
"""Preset of whole-space recall: stage inference, Phase 2's recall ranking, flat mode."""


@dataclass(frozen=True)
class SpaceRecall:
    """One whole-space recall: the k asked for, the hits valid at ``as_of`` (rank order),
    and the query's intent."""

    k: int
    hits: list[RecallHit]
    intent: str

    @property
    def time_order(self) -> bool:
        """An event-order question: its records are shown in time order."""
        return self.intent == str(Intent.EVENT_ORDER)


def space_recall(run: Run, k: int) -> SpaceRecall:
    """Recall over the whole space, in rank order (event-order questions too: what is packed
    is chosen by relevance, and shown in time order by
    :func:`~pipelines.assemble.items.display_order`): the hits valid at ``as_of``."""
    resp = run.recaller.recall(
        run.space,
        RecallRequest(
            query=run.request.query,
            k=k,
            filters=RecallFilters(time_to=run.as_of),
            include_superseded=run.with_superseded,
            touch=False,
            now=run.now,
            preset=SPACE_PRESET,
            session_novelty=0.0,  # packed by budget: see RecallRequest.session_novelty
            order="relevance",
        ),
    )
    return SpaceRecall(k, valid(run, resp.results), resp.intent)


def valid(run: Run, hits: Sequence[RecallHit]) -> list[RecallHit]:
    """With ``as_of`` / ``known_at``: only the hits valid then (existing, not yet superseded)."""
    if not run.time_travel or not hits:
        return list(hits)
    ok = valid_ids(run, [h.id for h in hits])
    return [h for h in hits if h.id in ok]


def valid_ids(run: Run, ids: Sequence[str]) -> set[str]:
    """Which of the memories ``ids`` were valid at ``as_of`` as known at ``known_at`` (all of
    them without either)."""
    if not run.time_travel or not ids:
        return set(ids)
    rows = run.store.read(
        "assemble/valid_at",
        space=run.space,
        ids=list(dict.fromkeys(ids)),
        as_of=run.as_of,
        known_at=run.known_at,
        include_superseded=run.request.include_superseded,
    )
    return {r["id"] for r in rows}


def phase_k(run: Run, share: int) -> int:
    """Items a phase's token ``share`` may hold at the expected item size (at least
    ``max_chunks_per_phase``): sizes candidate pools, never the selection."""
    cfg = run.config
    return max(cfg.max_chunks_per_phase, math.ceil(share / cfg.expected_item_tokens))


def own_stage(run: Run, current: Stage | None, share: int, mmr: bool = True) -> list[Item]:
    """Phase 1: the current stage's memories (the whole space without one), recalled
    ``oversample`` times what the share holds, in greedy MMR order (score order without
    ``mmr``)."""
    pool = max(1, min(MAX_K, phase_k(run, share) * run.config.oversample))
    filters = RecallFilters(
        time_to=run.as_of, stages=(current.id,) if current is not None else None
    )
    resp = run.recaller.recall(
        run.space,
        RecallRequest(
            query=run.request.query,
            k=pool,
            filters=filters,
            include_superseded=run.with_superseded,
            touch=False,
            now=run.now,
            preset=PHASE_PRESET,
            oversample=pool,
            session_novelty=0.0,
        ),
        with_embeddings=True,
    )
    hits = sorted(valid(run, resp.results), key=lambda h: -h.score)  # stable: rank ties
    if not hits:
        return []
    order: list[tuple[RecallHit, Evidence]]
    if not mmr:
        order = [(h, Evidence(rank=n + 1)) for n, h in enumerate(hits)]
    else:
        dims = run.embedder.dimensions
        matrix = np.zeros((len(hits), dims), dtype=np.float64)
        for row, h in enumerate(hits):
            if h.embedding is not None and np.shape(h.embedding) == (dims,):
                matrix[row] = h.embedding
        picks = mmr_select(
            [h.id for h in hits], [h.score for h in hits], matrix, len(hits), run.config.mmr_lambda
        )
        by_id = {h.id: h for h in hits}
        order = [(by_id[p.id], Evidence(rank=p.rank, mmr_gain=round(p.gain, 4))) for p in picks]
    shown = run.config.long_memory_chunks
    return [
        memory_item(h, detail, run.est, with_stage=False, chunks_shown=shown) for h, detail in order
    ]
