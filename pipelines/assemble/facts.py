"""Facts: the compact tier of a context (seed 004's tiers: facts, summaries, raw turns).

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

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime

from pipelines.assemble.blocks import RECORDS_TAG
from pipelines.assemble.items import Item, display_order, grouped, record_item, records_text
from pipelines.assemble.recalls import SPACE_PRESET, valid_ids
from pipelines.assemble.report import FactsPhase, ItemReport
from pipelines.assemble.request import FACTS_SECTION
from pipelines.assemble.run import Run
from pipelines.graph import Row, from_epoch_micros
from pipelines.ingest.text import normalise_for_match
from pipelines.recall.steps.standing import STANDING_CATEGORIES

__all__ = [
    "FACTS_HEADER",
    "FACTS_SECTION",
    "Fact",
    "choose_facts",
    "choose_for_share",
    "fact_items",
    "fact_section",
    "facts_phase",
    "facts_text",
    "facts_wanted",
    "query_vector",
    "read_facts",
    "start_facts",
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
