"""Ingest throughput against the bare embedder, and what ingest stored, per dataset.

For every conversation of each dataset (LoCoMo, BEAM-100K), side by side in one process:

1. **bare embedder**: ``engine.embedder.encode`` of exactly the texts ingest embeds (each
   memory's ``"speaker: content"``, and the chunks of a memory longer than the embedder's
   window, as :meth:`pipelines.ingest.service.Ingestor.embedding_texts` lists them), in the
   configured batch size;
2. **spaCy alone**: the entity extractor over the turns (for reference);
3. **ingest**: ``Ingestor.ingest_sessions`` into a fresh space (gate off, every turn verbatim),
   then the space's graph counted and the space deleted.

The ratio is ``bare embed seconds / ingest seconds`` (1.0: ingest runs at the encoder's pace).
The load average is sampled before each conversation. Graph counts are reported per 100
memories: entities, MENTIONS, CO_OCCURS edges, chunks, entity candidates, facts.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

from benchmarks import machine

#: Graph counts reported per 100 memories.
PER_100 = ("entities", "mentions", "cooccurrences", "chunks", "entity_candidates", "facts")


def embedded_texts(ingestor: Any, sessions: Sequence[Any]) -> list[str]:
    """The texts ingest hands the embedder for these sessions (its own plan when it has one)."""
    turns = [(t.content, t.speaker) for s in sessions for t in s.turns]
    plan = getattr(ingestor, "embedding_texts", None)
    if plan is not None:
        return list(plan(turns))
    from pipelines.ingest.text import embedding_input

    with_speaker = ingestor.config.embed_speaker
    return [embedding_input(c, s, with_speaker=with_speaker) for c, s in turns]


def _graph_counts(engine: Any, system: Any, space: str) -> dict[str, Any]:
    from benchmarks.cypher import statements

    pool = system.pool_size(space)
    pool.update(statements(engine.store).read("space_write_stats", space=space)[0])
    return pool


def conversation_row(engine: Any, system: Any, conv: Any, space: str) -> dict[str, Any]:
    """Bare embedding, spaCy and ingest of one conversation (module docstring)."""
    from benchmarks.sut import corpus_sessions

    sessions = corpus_sessions(conv.sessions)
    turns = [t.content for s in sessions for t in s.turns]
    inputs = embedded_texts(system.ingestor, sessions)
    load = machine.load_average()
    t0 = time.perf_counter()
    engine.embedder.encode(inputs)
    embed_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    system.ingestor.extractor.extract_batch(turns)
    spacy_s = time.perf_counter() - t0
    try:
        stats = system.prepare(space, sessions)
        pool = _graph_counts(engine, system, space)
    finally:
        system.drop(space)
    memories = max(1, int(pool.get("memories") or 0))
    return {
        "conversation": conv.id,
        "turns": len(turns),
        "embedded_texts": len(inputs),
        "longest_turn_chars": max(len(t) for t in turns),
        "load_average": load,
        "embed_s": round(embed_s, 3),
        "embed_texts_per_s": round(len(inputs) / embed_s, 1),
        "spacy_s": round(spacy_s, 3),
        "ingest_s": round(stats.seconds, 3),
        "ingest_turns_per_s": round(stats.turns / stats.seconds, 1),
        "ratio": round(embed_s / stats.seconds, 3),
        **{k: pool.get(k) for k in ("memories", *PER_100, "instructions", "preferences")},
        "per_100_memories": {k: round(100 * (pool.get(k) or 0) / memories, 1) for k in PER_100},
    }


def dataset_ingest(
    engine: Any, system: Any, name: str, dataset: Any, progress: bool
) -> dict[str, Any]:
    """Every conversation of one dataset (module docstring); totals and per-100 figures."""
    convs = list(dataset.conversations)
    iterator: Any = convs
    if progress:
        from tqdm import tqdm

        iterator = tqdm(convs, desc=f"ingest throughput ({name})", unit="conv")
    tag = uuid.uuid4().hex[:8]
    rows = [
        conversation_row(engine, system, c, f"perf-{tag}-{name}-{i}")
        for i, c in enumerate(iterator)
    ]
    memories = sum(int(r["memories"] or 0) for r in rows)
    embed_s = sum(r["embed_s"] for r in rows)
    ingest_s = sum(r["ingest_s"] for r in rows)
    turns = sum(r["turns"] for r in rows)
    totals = {k: sum(int(r[k] or 0) for r in rows) for k in PER_100}
    loads = [r["load_average"][0] for r in rows if r.get("load_average")]
    return {
        "conversations": rows,
        "total": {
            "turns": turns,
            "embedded_texts": sum(r["embedded_texts"] for r in rows),
            "memories": memories,
            "longest_turn_chars": max(r["longest_turn_chars"] for r in rows),
            "embed_s": round(embed_s, 2),
            "ingest_s": round(ingest_s, 2),
            "spacy_s": round(sum(r["spacy_s"] for r in rows), 2),
            "ingest_turns_per_s": round(turns / ingest_s, 1),
            "ratio": round(embed_s / ingest_s, 3),
            "ratio_median": _median([r["ratio"] for r in rows]),
            "load_average_1m_median": _median(loads),
            **totals,
            "per_100_memories": {k: round(100 * totals[k] / max(1, memories), 1) for k in PER_100},
            "embedding_batch_size": getattr(engine.embedder, "batch_size", None),
        },
    }


def _median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    s = sorted(values)
    mid = len(s) // 2
    return round(s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2, 3)


def ingest_markdown(name: str, ing: dict[str, Any]) -> list[str]:
    """The report section of one dataset."""
    from benchmarks.reports import _f, _table

    t = ing["total"]
    p = t["per_100_memories"]
    lines = [
        f"## Ingest throughput ({name}, Ingestor.ingest_sessions, gate off)",
        "",
        f"{t['turns']} turns ({t['embedded_texts']} texts embedded, longest turn "
        f"{t['longest_turn_chars']:,} characters): ingest {t['ingest_s']} s against the bare "
        f"embedder's {t['embed_s']} s on the same texts → **ratio {t['ratio']}** (median per "
        f"conversation {t['ratio_median']}; load average 1 min median "
        f"{t['load_average_1m_median']}). Per 100 memories: entities {p['entities']}, mentions "
        f"{p['mentions']}, co-occurrence edges {p['cooccurrences']}, chunks {p['chunks']}, "
        f"entity candidates {p['entity_candidates']}, facts {p['facts']}.",
        "",
    ]
    lines += _table(
        ["conversation", "turns", "texts", "embed s", "ingest s", "ratio", "load 1m", "entities",
         "mentions", "co-occ. edges", "chunks"],
        [
            [
                r["conversation"],
                str(r["turns"]),
                str(r["embedded_texts"]),
                _f(r["embed_s"], 1),
                _f(r["ingest_s"], 1),
                _f(r["ratio"], 2),
                _f((r.get("load_average") or [None])[0], 2),
                str(r["entities"]),
                str(r["mentions"]),
                str(r["cooccurrences"]),
                str(r["chunks"]),
            ]
            for r in ing["conversations"]
        ],
    )  # fmt: skip
    lines.append("")
    return lines
