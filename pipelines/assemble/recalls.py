"""The recalls an assembly makes: over the whole space, and within the current stage.

Whole-space recall (:func:`space_recall`) is made at most once per assembly: stage inference
votes with it, Phase 2 ranks other stages' memories by it, and flat mode packs it.  Phase 1
(:func:`own_stage`) recalls within the current stage, oversampled, and orders the pool by
greedy MMR so that the head of the order covers the stage rather than repeating one thing.

Facts: the compact tier of a context (seed 004's tiers: facts, summaries, raw turns).

Ingest keeps atomic facts, each one clause of one turn (:mod:`pipelines.ingest.facts`), with an
embedding. Both modes give them up to ``facts_share`` of the sections' room (flat mode:
:mod:`~pipelines.assemble.flat`, staged mode: :mod:`~pipelines.assemble.staged_facts`): the
facts closest to the query whose turns the other sections do not already show, at most
``facts_per_memory`` per turn, in rank order, as records of their own (``[when] who: clause``)
in a ``## Facts`` section before the other sections. A small window so carries the gist of many
turns before it carries a few of them whole. Each fact names the turn it came from:
``included_ids["facts"]`` lists those turns. The facts are read beside the recalls
(:func:`start_facts`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from pipelines.assemble.items import (
    Evidence,
    Item,
    Stage,
    display_order,
    grouped,
    memory_item,
    record_item,
    records_text,
)
from pipelines.assemble.report import FactsPhase, ItemReport
from pipelines.assemble.request import FACTS_SECTION, Run
from pipelines.graph import Row, from_epoch_micros
from pipelines.ingest.text import normalise_for_match
from pipelines.prompt.blocks import RECORDS_TAG
from pipelines.recall.intent import Intent
from pipelines.recall.request import MAX_K, PresetName
from pipelines.recall.service import RecallFilters, RecallHit, RecallRequest
from pipelines.recall.steps.select import mmr_select
from pipelines.recall.steps.standing import STANDING_CATEGORIES

__all__ = [
    "FACTS_HEADER",
    "FACTS_SECTION",
    "PHASE_PRESET",
    "SPACE_PRESET",
    "Fact",
    "SpaceRecall",
    "choose_facts",
    "choose_for_share",
    "fact_items",
    "fact_section",
    "facts_phase",
    "facts_text",
    "facts_wanted",
    "own_stage",
    "query_vector",
    "read_facts",
    "space_recall",
    "start_facts",
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


FACTS_HEADER = "## Facts"


#: The fact index is over-fetched this many times ``facts_k`` (it is global: other spaces'
#: facts are filtered out after the search).
_FETCH_FACTOR = 8


@dataclass(frozen=True, slots=True)
class Fact:
    """One recalled fact and the memory (turn) it was extracted from."""

    id: str
    text: str
    category: str
    speaker: str | None
    source_id: str
    moment: datetime | None
    score: float


def facts_wanted(run: Run) -> bool:
    cfg = run.config
    return cfg.facts_share > 0.0 and cfg.facts_k > 0


def start_facts(run: Run) -> Future[list[Fact]] | None:
    """The facts read on the ``read_ahead`` executor, the query embedded first (once: the
    embedder's memo serves whole-space recall); ``None`` when the tier is off."""
    if not facts_wanted(run):
        return None
    return run.read_ahead.submit(read_facts, run, query_vector(run))


def query_vector(run: Run) -> list[float]:
    """The query as whole-space recall embeds it (the embedder's memo then serves both)."""
    text = run.recaller.vector_text(run.space, run.request.query, SPACE_PRESET)
    return [float(x) for x in run.embedder.encode([text])[0]]


def read_facts(run: Run, vector: Sequence[float]) -> list[Fact]:
    """The space's standing statements (``facts_standing_k``, closest first), then its other
    facts closest to the query ``vector``, best first: from memories valid at ``as_of``,
    active unless superseded ones are asked for."""
    cfg = run.config
    statuses = ["active", "superseded"] if run.with_superseded else ["active"]
    rows = []
    if cfg.facts_standing_k:
        rows = run.store.read(
            "assemble/standing_facts",
            space=run.space,
            embedding=list(vector),
            categories=list(STANDING_CATEGORIES),
            k=cfg.facts_standing_k,
            min_similarity=cfg.facts_standing_min_similarity,
            statuses=statuses,
            time_to=run.as_of,
        )
    rows += run.store.read(
        "assemble/facts",
        space=run.space,
        embedding=list(vector),
        exact_max=cfg.facts_exact_max,
        fetch=cfg.facts_k * _FETCH_FACTOR,
        k=cfg.facts_k,
        include_superseded=run.with_superseded,
        statuses=statuses,
        time_to=run.as_of,
    )
    first: dict[str, Row] = {}
    for r in rows:
        first.setdefault(r["id"], r)  # a standing statement keeps its place at the front
    rows = list(first.values())
    facts = [
        Fact(
            id=r["id"],
            text=r["text"],
            category=r["category"],
            speaker=r["speaker"] or r["source_speaker"] or r["role"],
            source_id=r["source_id"],
            moment=from_epoch_micros(r["event_time_us"]),
            score=float(r["score"]),
        )
        for r in rows
    ]
    if run.time_travel and facts:
        ok = valid_ids(run, [f.source_id for f in facts])
        facts = [f for f in facts if f.source_id in ok]
    return facts


def choose_facts(
    facts: Sequence[Fact],
    shown: set[str],
    room: int,
    per_memory: int,
    cost: Callable[[Fact], int],
) -> list[Fact]:
    """The facts a section of ``room`` tokens shows, in rank order: first fit, skipping facts
    of the turns in ``shown`` (their records are in the context), repeats of a text already
    taken, and a turn's facts after its first ``per_memory``."""
    out: list[Fact] = []
    used = 0
    per: dict[str, int] = {}
    texts: set[str] = set()
    for fact in facts:
        key = normalise_for_match(fact.text)
        if fact.source_id in shown or per.get(fact.source_id, 0) >= per_memory or key in texts:
            continue
        tokens = cost(fact)
        if used + tokens > room:
            continue
        used += tokens
        out.append(fact)
        per[fact.source_id] = per.get(fact.source_id, 0) + 1
        texts.add(key)
    return out


def fact_items(run: Run, facts: Sequence[Fact]) -> list[Item]:
    """The facts as records (``[when] who: clause``), each item's id the fact's."""
    return [
        record_item(f.id, f.text, f.speaker, f.moment, round(f.score, 6), run.est) for f in facts
    ]


def facts_text(items: Sequence[Item]) -> str:
    """The ``## Facts`` section of fact records ("" without any)."""
    if not items:
        return ""
    return f"{FACTS_HEADER}\n{records_text(items)}"


def fact_section(run: Run, facts: Sequence[Fact], time_order: bool) -> list[Item]:
    """The facts as their section shows them: records in display order, grouped."""
    return grouped(display_order(fact_items(run, facts), time_order))


def choose_for_share(
    run: Run, facts: Sequence[Fact], shown: set[str], share: int, time_order: bool
) -> tuple[list[Fact], int]:
    """The facts (rank order, :func:`choose_facts`) a section of ``share`` tokens holds, its
    frame (header and data tags) charged first, skipping the turns in ``shown``; and the tokens
    of that section as rendered (0 without a fact)."""
    rendered = {i.id: i for i in fact_items(run, facts)}
    frame = run.est.count(f"{FACTS_HEADER}\n<{RECORDS_TAG}>\n</{RECORDS_TAG}>") + 1

    def cost(fact: Fact) -> int:
        item = rendered[fact.id]
        return item.tokens + item.group_tokens

    chosen = choose_facts(facts, shown, share - frame, run.config.facts_per_memory, cost)
    items = grouped(display_order([rendered[f.id] for f in chosen], time_order))
    return chosen, run.est.count(facts_text(items))


def facts_phase(
    run: Run,
    facts: Sequence[Fact],
    chosen: Sequence[Item],
    sources: Mapping[str, str],
    share: int,
    shown: Sequence[Item],
) -> FactsPhase:
    """What the tier read (``facts``), chose (``chosen``, each fact's turn in ``sources``) for
    its ``share`` of tokens and kept (``shown``: still in the prompt); ``explain``: every fact
    read."""
    phase = FactsPhase(
        candidates=len(facts),
        selected=len(chosen),
        share_tokens=share,
        included=len(shown),
        turns=len({sources[i.id] for i in shown}),
    )
    if run.explain:
        picked = {i.id for i in chosen}
        phase.items = [
            ItemReport(
                id=f.id,
                tokens=run.est.count(f.text),
                score=round(f.score, 6),
                selected=f.id in picked,
                source=f.source_id,
            )
            for f in facts
        ]
    return phase
