"""Stage schemas: a deterministic, schema-structured summary of every stage.

:func:`build_schema` (pure) turns a stage's active memories, their active facts and their
entities into a :class:`SchemaSummary`:

* **entities** - the stage's key entities, by how many of its memories mention them (speakers'
  own names and their short forms left out: they are who talks, not what it is about; so are
  names made only of greetings, thanks and interjections, "Congrats");
* **decisions** - ``decision`` facts (credited to users by the fact rules), most recent kept;
* **outcomes** - facts (``fact``/``decision``/``action_item``) that report a result
  ("finished", "fixed", "shipped", "got the job", ...);
* **open questions** - ``question`` facts that none of the next ``answer_window`` memories of
  another speaker answers (an answer shares ``answer_overlap`` of the question's content
  words);
* **highlights** - the most informative sentence of the most informative memories (their
  key entities, then their information content, :mod:`pipelines.ingest.salience`), never a
  greeting, a thank-you or a bare reaction;
* **summary** - all of the above as one bounded text, which is also embedded.

Facts, questions and highlights are read without their social clauses ("Thanks, Mel. | ...",
"Hey Caroline, | since we last talked ..."): what is left of a text that is only social talk
is nothing, and it is left out. The salience of each text (spaCy) is computed by the service
(:func:`_build_rows`) and handed to :func:`build_schema`, which stays pure.

A schema is stored as ``(:Schema {space, id: 'schema:' + stage id, ...})-[:SUMMARIZES]->
(:Stage)`` with a ``fingerprint`` of what it was built from (the stage's memories, their
status and active fact counts, the stage's name). The job refreshes exactly the stages whose
fingerprint changed; :func:`ensure_schema` does the same for one stage on demand (the context
assembler calls it) and returns the cached schema when nothing changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from pipelines import spaces
from pipelines.consolidate.config import DEFAULT_CONSOLIDATION_CONFIG, SchemaConfig
from pipelines.consolidate.context import JobContext
from pipelines.consolidate.records import StageSchema
from pipelines.consolidate.schema_parts import (
    StageEntity,
    StageFact,
    StageMemory,
    TextReader,
    decisions_and_outcomes,
    dedupe_keep_last,
    find_open_questions,
    first_sentence,
    pick_highlights,
    rank_key_entities,
    stage_facts,
)
from pipelines.engine import Engine
from pipelines.errors import NotFound
from pipelines.ingest.salience import Salience, analyse, name_forms

__all__ = [
    "SCHEMA_VERSION",
    "SchemaSummary",
    "StageEntity",
    "StageFact",
    "StageMemory",
    "build_schema",
    "ensure_schema",
    "ensure_schemas",
    "fingerprint",
    "first_sentence",
    "run",
    "stored_schema",
    "stored_schemas",
]

SCHEMA_VERSION = "2"


@dataclass(frozen=True)
class SchemaSummary:
    stage_id: str
    summary: str
    entities: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    highlights: list[str] = field(default_factory=list)
    speakers: list[str] = field(default_factory=list)
    memory_count: int = 0
    session_count: int = 0
    start: datetime | None = None
    end: datetime | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "…"


def build_schema(
    memories: Sequence[StageMemory],
    facts: Sequence[StageFact],
    entities: Sequence[StageEntity],
    *,
    stage_id: str,
    stage_name: str | None = None,
    config: SchemaConfig = DEFAULT_CONSOLIDATION_CONFIG.schemas,
    salience: Mapping[str, Salience] | None = None,
) -> SchemaSummary:
    """The schema-structured summary of one stage (see the module docstring). Pure and
    deterministic: the same inputs in any order give the same summary. ``salience``: text
    -> its salience (:func:`pipelines.ingest.salience.analyse`) for the memories' and facts'
    texts; a text without one is read whole."""
    reader = TextReader(salience)
    ordered = sorted(memories, key=StageMemory.order)
    position = {m.id: i for i, m in enumerate(ordered)}
    speakers = sorted({m.speaker for m in ordered if m.speaker}, key=str.casefold)
    key_entities, key_set = rank_key_entities(ordered, entities, speakers, config)
    fact_list = stage_facts(facts, position, reader)
    decisions, outcomes = decisions_and_outcomes(fact_list, config)
    open_questions = dedupe_keep_last(
        find_open_questions(
            ordered,
            fact_list,
            position,
            config,
            name_forms(speakers),
            reader if salience is not None else None,
        ),
        config.max_questions,
    )
    highlights = pick_highlights(ordered, position, key_set, reader, config)
    times = [m.time for m in ordered if m.time is not None]
    start, end = (min(times), max(times)) if times else (None, None)
    sessions = {m.session_id for m in ordered if m.session_id}
    summary = SchemaSummary(
        stage_id=stage_id,
        summary="",
        entities=key_entities,
        decisions=decisions,
        outcomes=outcomes,
        open_questions=open_questions,
        highlights=highlights,
        speakers=speakers,
        memory_count=len(ordered),
        session_count=len(sessions),
        start=start,
        end=end,
    )
    text = _summary_text(summary, stage_name or stage_id)
    return replace(summary, summary=_bounded(text, config.max_summary_chars))


def _summary_text(s: SchemaSummary, name: str) -> str:
    """Every part of a schema as one text (before bounding)."""
    head = f"{name}: {s.memory_count} memories"
    if s.session_count:
        head += f" in {s.session_count} session{'s' if s.session_count != 1 else ''}"
    if s.start is not None and s.end is not None:
        head += f", {s.start:%Y-%m-%d}" + (
            f" to {s.end:%Y-%m-%d}" if s.end.date() != s.start.date() else ""
        )
    parts = [head + "."]
    if s.speakers:
        parts.append("Speakers: " + ", ".join(s.speakers) + ".")
    if s.entities:
        parts.append("Key entities: " + ", ".join(s.entities) + ".")
    if s.decisions:
        parts.append("Decisions: " + "; ".join(s.decisions) + ".")
    if s.outcomes:
        parts.append("Outcomes: " + "; ".join(s.outcomes) + ".")
    if s.open_questions:
        parts.append("Open questions: " + " ".join(s.open_questions))
    if s.highlights:
        parts.append("Highlights: " + " / ".join(f'"{h}"' for h in s.highlights))
    return " ".join(parts)


def fingerprint(name: str | None, members: Sequence[str]) -> str:
    """What a schema was built from: algorithm version, stage name, member signatures."""
    h = hashlib.sha1(f"{SCHEMA_VERSION}|{name or ''}|".encode())
    for member in sorted(members):
        h.update(member.encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


# --------------------------------------------------------------------------- service


Inputs = tuple[list[StageMemory], list[StageFact], list[StageEntity]]


def _inputs(
    rows: Sequence[Mapping[str, Any]], names: Mapping[str, StageEntity]
) -> dict[str, Inputs]:
    out: dict[str, tuple[list[StageMemory], list[StageFact], dict[str, StageEntity]]] = {}
    for r in rows:
        mems, facts, ents = out.setdefault(r["stage"], ([], [], {}))
        mems.append(
            StageMemory(
                id=r["id"],
                text=r["text"] or "",
                speaker=r["speaker"],
                role=r["role"],
                time=(
                    datetime.fromtimestamp(r["event_ms"] / 1000.0, UTC)
                    if r["event_ms"] is not None
                    else None
                ),
                session_id=r["session_id"],
                turn_index=r["turn_index"],
                entity_keys=tuple(r["entities"]),
            )
        )
        for f in r["facts"]:
            facts.append(
                StageFact(f["id"], r["id"], f["category"], f["text"], f["speaker"], f["role"])
            )
        for key in r["entities"]:
            if key in names:
                ents.setdefault(key, names[key])
    return {k: (m, f, list(e.values())) for k, (m, f, e) in out.items()}


def _build_rows(
    engine: Engine, space: str, stages: Sequence[Mapping[str, Any]], config: SchemaConfig
) -> list[dict[str, Any]]:
    """Build (and embed) the schemas of some stages (fingerprint rows)."""
    ids = [s["id"] for s in stages]
    rows = engine.store.read(
        "consolidate/schema_inputs", space=space, stages=ids, max_chars=config.max_text_chars
    )
    names = {
        r["key"]: StageEntity(r["key"], r["name"], r["kind"])
        for r in engine.store.read("consolidate/schema_entities", space=space, stages=ids)
    }
    inputs = _inputs(rows, names)
    built: list[tuple[Mapping[str, Any], SchemaSummary]] = []
    for st in stages:
        mems, facts, ents = inputs.get(st["id"], ([], [], []))
        if not mems:
            continue
        summary = build_schema(
            mems,
            facts,
            ents,
            stage_id=st["id"],
            stage_name=st["name"],
            config=config,
            salience=_salience(engine, mems, facts),
        )
        built.append((st, summary))
    if not built:
        return []
    vectors = engine.embedder.encode([s.summary for _, s in built])
    return [
        {
            "id": f"schema:{st['id']}",
            "stage_id": st["id"],
            "summary": s.summary,
            "entities": s.entities,
            "decisions": s.decisions,
            "outcomes": s.outcomes,
            "open_questions": s.open_questions,
            "highlights": s.highlights,
            "speakers": s.speakers,
            "memory_count": s.memory_count,
            "session_count": s.session_count,
            "fingerprint": fingerprint(st["name"], st["members"]),
            "caption": f"schema {st['name'] or st['id']}",
            "embedding": [float(x) for x in vec],
        }
        for (st, s), vec in zip(built, vectors, strict=True)
    ]


def _salience(
    engine: Engine, mems: Sequence[StageMemory], facts: Sequence[StageFact]
) -> dict[str, Salience]:
    """The salience of a stage's memory and fact texts (spaCy, one batch), the stage's
    speakers being the names a vocative uses."""
    texts = list(dict.fromkeys([*(m.text for m in mems), *(f.text for f in facts)]))
    speakers = {m.speaker for m in mems if m.speaker}
    return dict(zip(texts, analyse(engine.nlp, texts, speakers), strict=True))


def _is_stale(st: Mapping[str, Any]) -> bool:
    return bool(st["active"] > 0 and st["fingerprint"] != fingerprint(st["name"], st["members"]))


def _empty_schema(stage_id: str) -> dict[str, Any]:
    return {
        "id": None,
        "stage_id": stage_id,
        "summary": "",
        "entities": [],
        "decisions": [],
        "outcomes": [],
        "open_questions": [],
        "highlights": [],
        "speakers": [],
        "memory_count": 0,
        "session_count": 0,
        "embedding": None,
        "refreshed_at": None,
        "rebuilt": False,
    }


def ensure_schemas(
    engine: Engine,
    space: str,
    stage_ids: Sequence[str],
    config: SchemaConfig = DEFAULT_CONSOLIDATION_CONFIG.schemas,
) -> dict[str, dict[str, Any]]:
    """The schemas of some stages, the missing or stale ones built now, in three round trips
    whatever their number (fingerprints, one write for the rebuilt ones, one read).

    Returns stage id -> the stored properties (``summary``, ``entities``, ``decisions``,
    ``outcomes``, ``open_questions``, ``highlights``, ``speakers``, ``memory_count``,
    ``session_count``, ``embedding``, ``refreshed_at``, ...) plus ``rebuilt``. A stage without
    active memories gets ``{"stage_id", "summary": "", "memory_count": 0, ...}`` (nothing
    stored); unknown stage ids are absent from the result.
    """
    ids = list(dict.fromkeys(stage_ids))
    if not ids:
        return {}
    found = engine.store.read("consolidate/schema_fingerprints", space=space, stages=ids)
    out = {st["id"]: _empty_schema(st["id"]) for st in found if st["active"] == 0}
    live = [st for st in found if st["active"] > 0]
    stale = [st for st in live if _is_stale(st)]
    rebuilt: set[str] = set()
    if stale:
        built = _build_rows(engine, space, stale, config)
        if built:
            spaces.write_locked(
                engine.store, space, "consolidate/schema_write", rows=built, now=datetime.now(UTC)
            )
            rebuilt = {b["stage_id"] for b in built}
    if live:
        rows = engine.store.read(
            "consolidate/schema_get_many", space=space, stages=[st["id"] for st in live]
        )
        for r in rows:
            out[r["stage_id"]] = {**r["schema"], "rebuilt": r["stage_id"] in rebuilt}
    for st in live:  # nothing could be built (no summarisable text): an empty schema
        out.setdefault(st["id"], _empty_schema(st["id"]))
    return out


def stored_schemas(
    engine: Engine, space: str, stage_ids: Sequence[str]
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The stored schemas of some stages, never building one (two reads, no write), and the
    stages whose schema is missing or stale (for a build off the read path).

    Returns stage id -> the stored properties with ``rebuilt: False`` and ``stale`` (true: the
    stage changed since it was built); a stage without active memories gets the empty schema;
    a stage with active memories but no stored schema is absent, as are unknown stage ids.
    """
    ids = list(dict.fromkeys(stage_ids))
    if not ids:
        return {}, []
    found = engine.store.read("consolidate/schema_fingerprints", space=space, stages=ids)
    out = {st["id"]: _empty_schema(st["id"]) for st in found if st["active"] == 0}
    live = {st["id"]: st for st in found if st["active"] > 0}
    if live:
        rows = engine.store.read("consolidate/schema_get_many", space=space, stages=list(live))
        for r in rows:
            stale = _is_stale(live[r["stage_id"]])
            out[r["stage_id"]] = {**r["schema"], "rebuilt": False, "stale": stale}
    to_build = [sid for sid in live if sid not in out or out[sid]["stale"]]
    return out, to_build


def stored_schema(engine: Engine, space: str, stage_id: str) -> tuple[StageSchema | None, bool]:
    """The stored schema of one stage (None: not built yet) and whether it needs a build (see
    :func:`stored_schemas`). Raises NotFound for an unknown space or stage."""
    got, to_build = stored_schemas(engine, space, [stage_id])
    if stage_id in got:
        return StageSchema.model_validate(got[stage_id]), bool(to_build)
    if not to_build:
        spaces.require(engine.store, space)
        raise NotFound(f"stage {stage_id!r} does not exist in space {space!r}", field="stage")
    return None, True


def ensure_schema(
    engine: Engine,
    space: str,
    stage_id: str,
    config: SchemaConfig = DEFAULT_CONSOLIDATION_CONFIG.schemas,
) -> StageSchema:
    """The schema of one stage, built now if missing or stale, else the cached one (see
    :func:`ensure_schemas`). Raises NotFound for an unknown space or stage."""
    got = ensure_schemas(engine, space, [stage_id], config)
    if stage_id not in got:
        spaces.require(engine.store, space)
        raise NotFound(f"stage {stage_id!r} does not exist in space {space!r}", field="stage")
    return StageSchema.model_validate(got[stage_id])


def run(ctx: JobContext) -> None:
    cfg = ctx.config.schemas
    stages = ctx.store.read("consolidate/schema_fingerprints", space=ctx.space, stages=None)
    stale = [st for st in stages if _is_stale(st)]
    empty = [st["id"] for st in stages if st["active"] == 0 and st["schema_id"] is not None]
    orphans = ctx.store.read("consolidate/schema_orphans", space=ctx.space)[0]["orphans"]
    ctx.counts["stages"] = len(stages)
    ctx.counts["stale" if ctx.dry_run else "refreshed"] = 0
    ctx.counts["to_delete" if ctx.dry_run else "deleted"] = len(empty) + orphans
    for st in stale:
        ctx.note({"stage": st["id"], "new": st["schema_id"] is None})
    if ctx.dry_run:
        ctx.counts["stale"] = len(stale)
        return
    for start in range(0, len(stale), cfg.batch_size):
        rows = _build_rows(ctx.engine, ctx.space, stale[start : start + cfg.batch_size], cfg)
        if rows:
            ctx.counts["refreshed"] += spaces.write_locked(
                ctx.store, ctx.space, "consolidate/schema_write", rows=rows, now=ctx.now
            )[0]["written"]
        ctx.checkpoint(f"schemas:{start}")
    if empty or orphans:
        spaces.write_locked(ctx.store, ctx.space, "consolidate/schema_delete", stages=empty)
