"""The write path: conversation sessions and free memories into the graph.

One request is one transaction: either every memory, entity, edge and fact of it is stored, or
none. The expensive, pure work (embeddings, spaCy, fact rules, gate signals) runs before the
transaction opens; the transaction only writes.

Idempotency: memory ids are client ids or derived from the session and turn position, so a
re-sent session finds its ids present with the same content hash and reports them
``unchanged`` without touching counts or co-occurrence weights. The same id with different
content is a conflict (409) naming the turn.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any, Literal

import numpy as np

from pipelines import session_documents, spaces
from pipelines.engine import Engine
from pipelines.errors import Conflict, InvalidInput
from pipelines.graph import Tx, as_utc
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG, GateConfig, IngestConfig
from pipelines.ingest.entities import EntityExtractor, EntityMention, cooccurrence_pairs
from pipelines.ingest.facts import extract_facts
from pipelines.ingest.gate import DuplicateCandidate, GateDecision, compute_signals, decide
from pipelines.ingest.stages import (
    SessionSpan,
    StageState,
    assign_stages,
    default_stage_detector,
    stage_spans,
)
from pipelines.ingest.text import content_hash, embedding_input, is_utf8
from pipelines.models.late_interaction import TOKEN_FORMAT, pack
from pipelines.overrides import merge_overrides

Role = Literal["user", "assistant", "system", "tool", "note"]
Decision = Literal["stored", "merged", "rejected", "unchanged"]

GATE_CONTEXT_TURNS = 8  # previous turns of the batch used as novelty context
GATE_RECENT_MEMORIES = 16  # most recent stored memories used as novelty context
GATE_DUPLICATE_CANDIDATES = 5


@dataclass
class TurnIn:
    role: Role
    content: str
    id: str | None = None
    speaker: str | None = None
    time: datetime | None = None
    metadata: dict[str, Any] | None = None


@dataclass
class SessionIn:
    session_id: str
    turns: list[TurnIn]
    started_at: datetime | None = None
    stage: str | None = None


@dataclass
class MemoryIn:
    content: str
    id: str | None = None
    kind: str = "note"
    role: Role = "note"
    speaker: str | None = None
    tags: list[str] = field(default_factory=list)
    time: datetime | None = None
    stage: str | None = None
    metadata: dict[str, Any] | None = None
    session_id: str | None = None


@dataclass
class IngestOptions:
    gate: bool | None = None  # None: the space's setting (default off)
    force: bool = False  # bypass the gate: store everything


@dataclass
class ItemResult:
    id: str
    index: int
    decision: Decision
    reason: str
    signals: dict[str, Any] = field(default_factory=dict)
    merge_target: str | None = None
    entities: list[str] = field(default_factory=list)
    facts: int = 0


@dataclass
class IngestResult:
    items: list[ItemResult]
    stage_ids: list[str]
    session_id: str | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def memory_ids(self) -> list[str]:
        return [i.id for i in self.items if i.decision in ("stored", "unchanged")]


@dataclass
class _Item:
    """One memory to be (possibly) written, with everything computed before the transaction."""

    index: int
    id: str
    text: str
    role: str
    speaker: str | None
    kind: str
    tags: list[str]
    event_time: datetime
    session_id: str | None
    turn_index: int | None
    stage_label: str | None
    metadata: dict[str, Any] | None
    content_hash: str
    existing: bool = False
    stage_id: str | None = None
    embedding: np.ndarray | None = None
    tokens: bytes | None = None  # packed late-interaction token vectors
    mentions: list[EntityMention] = field(default_factory=list)
    gate: GateDecision | None = None
    facts: int = 0


class Ingestor:
    """Write-path service. Stateless apart from the engine and configuration."""

    def __init__(self, engine: Engine, config: IngestConfig = DEFAULT_INGEST_CONFIG) -> None:
        self.engine = engine
        self.config = config
        self.extractor = EntityExtractor(engine.nlp, config.entities)
        self.detector = default_stage_detector(config.stages)

    # ------------------------------------------------------------------ public API

    def ingest_session(
        self, space: str, session: SessionIn, options: IngestOptions | None = None
    ) -> IngestResult:
        return self.ingest_sessions(space, [session], options)[0]

    def ingest_sessions(
        self, space: str, sessions: Sequence[SessionIn], options: IngestOptions | None = None
    ) -> list[IngestResult]:
        """Ingest several sessions: models run over all of them at once (batched), then each
        session is written in its own transaction."""
        options = options or IngestOptions()
        space_cfg = self._space_gate(space)
        prepared: list[tuple[SessionIn, list[_Item]]] = []
        for si, session in enumerate(sessions):
            if not session.turns:
                raise InvalidInput("a session needs at least one turn", field="turns")
            prefix = "turns" if len(sessions) == 1 else f"sessions.{si}.turns"
            items = self._session_items(session, prefix)
            prepared.append((session, items))
        all_items = [it for _, items in prepared for it in items]
        self._mark_existing(space, all_items, "turns")
        self._compute(space, all_items, space_cfg, options)
        results = []
        for session, items in prepared:
            results.append(self._write_session(space, session, items))
        return results

    def add_memories(
        self, space: str, memories: Sequence[MemoryIn], options: IngestOptions | None = None
    ) -> IngestResult:
        options = options or IngestOptions()
        space_cfg = self._space_gate(space)
        if not memories:
            raise InvalidInput("at least one memory is required", field="memories")
        self._check_limit(len(memories), "memories")
        now = datetime.now(UTC)
        items = []
        for i, mem in enumerate(memories):
            text = self._check_text(mem.content, f"memories.{i}.content")
            mid = mem.id or f"mem-{content_hash(text)[:16]}"
            items.append(
                _Item(
                    index=i,
                    id=mid,
                    text=text,
                    role=mem.role,
                    speaker=mem.speaker,
                    kind=mem.kind,
                    tags=list(mem.tags),
                    event_time=as_utc(mem.time) or now,
                    session_id=mem.session_id,
                    turn_index=None,
                    stage_label=mem.stage,
                    metadata=mem.metadata,
                    content_hash=content_hash(text),
                )
            )
        self._check_unique_ids(items, "memories")
        self._mark_existing(space, items, "memories")
        self._compute(space, items, space_cfg, options)
        return self._write_free(space, items)

    # ------------------------------------------------------------------ preparation

    def _space_gate(self, space: str) -> GateConfig:
        """The gate configuration with the space's ``settings.gate`` overrides (validated:
        a bad one is a 422 naming its field)."""
        data = spaces.get(self.engine.store, space)  # 404 for an unknown space
        overrides = (data.get("settings") or {}).get("gate")
        return merge_overrides(self.config.gate, overrides, "settings.gate")

    def _check_limit(self, n: int, fld: str) -> None:
        if n > self.config.max_turns_per_request:
            raise InvalidInput(
                f"at most {self.config.max_turns_per_request} items per request, got {n}",
                field=fld,
            )

    def _check_text(self, text: str, fld: str) -> str:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("content must not be empty or whitespace", field=fld)
        if not is_utf8(text):
            raise InvalidInput("content contains a lone UTF-16 surrogate", field=fld)
        if len(text) > self.config.max_content_chars:
            raise InvalidInput(
                f"content has {len(text)} characters; the limit is "
                f"{self.config.max_content_chars} (split it into several memories)",
                field=fld,
            )
        return text

    @staticmethod
    def _check_unique_ids(items: Sequence[_Item], fld: str) -> None:
        seen: dict[str, int] = {}
        for it in items:
            if it.id in seen:
                raise InvalidInput(
                    f"id {it.id!r} appears twice in the request", field=f"{fld}.{it.index}.id"
                )
            seen[it.id] = it.index

    def _session_items(self, session: SessionIn, prefix: str) -> list[_Item]:
        self._check_limit(len(session.turns), prefix)
        start = as_utc(session.started_at)
        times = [as_utc(t.time) for t in session.turns]
        base = start or next((t for t in times if t), None) or datetime.now(UTC)
        items = []
        for i, turn in enumerate(session.turns):
            text = self._check_text(turn.content, f"{prefix}.{i}.content")
            items.append(
                _Item(
                    index=i,
                    id=turn.id or f"{session.session_id}#{i}",
                    text=text,
                    role=turn.role,
                    speaker=turn.speaker,
                    kind="turn",
                    tags=[],
                    event_time=times[i] or base,
                    session_id=session.session_id,
                    turn_index=i,
                    stage_label=session.stage,
                    metadata=turn.metadata,
                    content_hash=content_hash(text),
                )
            )
        self._check_unique_ids(items, prefix)
        return items

    def _mark_existing(
        self, space: str, items: list[_Item], fld: str, tx: Tx | None = None
    ) -> None:
        """Mark items stored with the same content ``unchanged`` (:class:`Conflict` for other
        content); again inside the transaction, under the space's write lock."""
        ids = [it.id for it in items]
        if tx is None:
            rows = self.engine.store.read("ingest/existing_memories", space=space, ids=ids)
        else:
            rows = tx.run("ingest/existing_memories", space=space, ids=ids)
        existing = {r["id"]: r["content_hash"] for r in rows}
        for it in items:
            if it.id in existing:
                if existing[it.id] != it.content_hash:
                    raise Conflict(
                        f"memory {it.id!r} already exists with different content; ids are "
                        "immutable (send a new id, or supersede the old memory)",
                        field=f"{fld}.{it.index}.id",
                    )
                it.existing = True

    def _compute(
        self, space: str, items: list[_Item], gate_cfg: GateConfig, options: IngestOptions
    ) -> None:
        """Embeddings, entities and gate decisions for the new items (no writes)."""
        new = [it for it in items if not it.existing]
        if not new:
            return
        inputs = [
            embedding_input(it.text, it.speaker, with_speaker=self.config.embed_speaker)
            for it in new
        ]
        with_tokens = getattr(self.engine.embedder, "encode_with_tokens", None)
        if self.config.token_vectors and with_tokens is not None:
            vectors, tokens = with_tokens(inputs)
            for it, tok in zip(new, tokens, strict=True):
                it.tokens = pack(tok)
        else:
            vectors = self.engine.embedder.encode(inputs)
        for it, vec in zip(new, vectors, strict=True):
            it.embedding = vec
        for it, mentions in zip(
            new, self.extractor.extract_batch([it.text for it in new]), strict=True
        ):
            it.mentions = mentions
        gate_on = options.gate if options.gate is not None else gate_cfg.enabled
        cfg = gate_cfg.model_copy(update={"enabled": bool(gate_on)})
        if not gate_on:
            reason = "forced" if options.force else "gate off: stored verbatim"
            for it in new:
                it.gate = GateDecision(decision="stored", signals={}, reason=reason)
            return
        self._gate(space, new, cfg, options)

    def _gate(self, space: str, new: list[_Item], cfg: GateConfig, options: IngestOptions) -> None:
        store = self.engine.store
        recent = store.read("ingest/recent_memories", space=space, limit=GATE_RECENT_MEMORIES)
        neighbours = store.read(
            "ingest/gate_neighbourhood",
            space=space,
            embeddings=[it.embedding.tolist() for it in new if it.embedding is not None],
            fetch=GATE_DUPLICATE_CANDIDATES * 10,
            per_item=GATE_DUPLICATE_CANDIDATES,
        )
        by_item: dict[int, list[DuplicateCandidate]] = {}
        for r in neighbours:
            by_item.setdefault(r["i"], []).append(
                DuplicateCandidate(r["id"], r["text"], np.asarray(r["embedding"]))
            )
        recent_texts = [r["text"] for r in recent]
        recent_vecs = [np.asarray(r["embedding"]) for r in recent if r["embedding"] is not None]
        accepted: list[tuple[_Item, np.ndarray]] = []
        for i, it in enumerate(new):
            assert it.embedding is not None  # _compute embedded every new item
            context = recent_texts + [a.text for a, _ in accepted[-GATE_CONTEXT_TURNS:]]
            vecs = recent_vecs + [v for _, v in accepted[-GATE_CONTEXT_TURNS:]]
            # earlier items of the same request are duplicate candidates too
            cands = by_item.get(i, []) + [DuplicateCandidate(a.id, a.text, v) for a, v in accepted]
            signals = compute_signals(
                it.text,
                it.embedding,
                context_texts=context,
                recent_embeddings=vecs,
                candidates=cands,
                config=cfg,
            )
            it.gate = decide(signals, cfg, force=options.force)
            if it.gate.decision == "stored":
                accepted.append((it, it.embedding))

    # ------------------------------------------------------------------ stages

    def _last_stage(self, tx: Tx, space: str) -> StageState | None:
        rows = tx.run("ingest/last_stage", space=space)
        if not rows or rows[0]["start"] is None:
            return None
        r = rows[0]
        return StageState(r["key"], r["start"].to_native(), r["end"].to_native(), r["kind"])

    def _assign_stages(self, tx: Tx, space: str, spans: list[SessionSpan]) -> dict[str, str]:
        last = self._last_stage(tx, space)
        assignments = assign_stages(spans, last, self.detector)
        extents = stage_spans(spans, assignments, last)
        kinds = {a.stage_key: a.kind for a in assignments}
        tx.run(
            "ingest/upsert_stages",
            space=space,
            stages=[
                {
                    "id": key,
                    "kind": kinds.get(key, ext.kind),
                    "name": key.split(":", 1)[1] if ":" in key else key,
                    "start": ext.start,
                    "end": ext.end,
                }
                for key, ext in extents.items()
            ],
        )
        tx.run("ingest/relink_stages", space=space)
        return {a.session_id: a.stage_key for a in assignments}

    # ------------------------------------------------------------------ writing

    def _write_session(self, space: str, session: SessionIn, items: list[_Item]) -> IngestResult:
        start = min(it.event_time for it in items)
        end = max(it.event_time for it in items)
        span = SessionSpan(session.session_id, start, end, session.stage)

        def work(tx: Tx) -> dict[str, int]:
            spaces.lock_for_write(tx, space)
            self._mark_existing(space, items, "turns", tx)
            stage_id = self._assign_stages(tx, space, [span])[session.session_id]
            for it in items:
                it.stage_id = stage_id
            tx.run(
                "ingest/upsert_session",
                space=space,
                session_id=session.session_id,
                started_at=start,
                ended_at=end,
                stage_id=stage_id,
            )
            counts = self._write_items(tx, space, items)
            kept = [it.id for it in items if it.existing or self._stored(it)]
            tx.run("ingest/link_next", space=space, pairs=list(pairwise(kept)))
            if any(self._stored(it) for it in items):
                session_documents.refresh(
                    tx, space, [session.session_id], self.config.session_document_max_memories
                )
            return counts

        counts = self.engine.store.write_tx(work)
        return self._result(items, counts, session.session_id)

    def _write_free(self, space: str, items: list[_Item]) -> IngestResult:
        spans = [
            SessionSpan(f"memory:{it.id}", it.event_time, None, it.stage_label) for it in items
        ]

        def work(tx: Tx) -> dict[str, int]:
            spaces.lock_for_write(tx, space)
            self._mark_existing(space, items, "memories", tx)
            stage_of = self._assign_stages(tx, space, spans)
            for it in items:
                it.stage_id = stage_of[f"memory:{it.id}"]
            return self._write_items(tx, space, items)

        counts = self.engine.store.write_tx(work)
        return self._result(items, counts, None)

    @staticmethod
    def _stored(it: _Item) -> bool:
        return not it.existing and it.gate is not None and it.gate.decision == "stored"

    def _write_items(self, tx: Tx, space: str, items: list[_Item]) -> dict[str, int]:
        """Write the stored items with their entities, co-occurrences and facts, and note
        the restatements the gate merged; returns what was written, by kind."""
        stored = [it for it in items if self._stored(it)]
        counts = Counter[str]()
        if stored:
            counts["memories"] = tx.run(
                "ingest/create_memories",
                space=space,
                space_tag=spaces.fulltext_tag(space),
                rows=[self._memory_row(it) for it in stored],
            )[0]["created"]
        counts.update(self._write_entities(tx, space, stored))
        fact_rows = [row for it in stored for row in self._fact_rows(it)]
        if fact_rows:
            counts["facts"] = tx.run("ingest/create_facts", space=space, facts=fact_rows)[0][
                "facts"
            ]
        merges = [
            {"target": it.gate.merge_target}
            for it in items
            if not it.existing and it.gate and it.gate.decision == "merged"
        ]
        if merges:
            tx.run("ingest/note_restatements", space=space, merges=merges)
            counts["merged"] = len(merges)
        return dict(counts)

    @staticmethod
    def _memory_row(it: _Item) -> dict[str, Any]:
        return {
            "id": it.id,
            "text": it.text,
            "role": it.role,
            "speaker": it.speaker,
            "kind": it.kind,
            "tags": it.tags,
            "event_time": it.event_time,
            "content_hash": it.content_hash,
            "session_id": it.session_id,
            "turn_index": it.turn_index,
            "stage_id": it.stage_id,
            "heat": 1.0,
            "importance": float(it.gate.signals.get("salience") or 0.5)
            if it.gate and it.gate.signals
            else 0.5,
            "gate": json.dumps(it.gate.signals) if it.gate and it.gate.signals else None,
            "metadata": json.dumps(it.metadata, sort_keys=True) if it.metadata else None,
            "caption": f"{it.speaker or it.role}: {it.text[:60]}",
            "embedding": it.embedding.tolist() if it.embedding is not None else None,
            "tokens": it.tokens,
            "token_format": TOKEN_FORMAT if it.tokens is not None else None,
        }

    @staticmethod
    def _write_entities(tx: Tx, space: str, stored: list[_Item]) -> dict[str, int]:
        """The stored items' entities (merged by key), their mentions and co-occurrences."""
        counts: dict[str, int] = {}
        entity_rows: dict[str, dict[str, Any]] = {}
        mention_rows = []
        for it in stored:
            for m in it.mentions:
                e = entity_rows.setdefault(
                    m.key,
                    {
                        "key": m.key,
                        "name": m.name,
                        "kind": m.kind,
                        "count": 0,
                        "first_seen": it.event_time,
                        "last_seen": it.event_time,
                    },
                )
                e["count"] += m.count
                e["first_seen"] = min(e["first_seen"], it.event_time)
                e["last_seen"] = max(e["last_seen"], it.event_time)
                mention_rows.append({"memory": it.id, "key": m.key, "count": m.count})
        if entity_rows:
            res = tx.run(
                "ingest/merge_entities",
                space=space,
                entities=list(entity_rows.values()),
                mentions=mention_rows,
            )
            counts["entities"] = len(entity_rows)
            counts["mentions"] = res[0]["mentions"] if res else 0
        pairs = cooccurrence_pairs([it.mentions for it in stored])
        if pairs:
            tx.run(
                "ingest/add_cooccurrence",
                space=space,
                pairs=[{"a": a, "b": b, "w": w} for (a, b), w in pairs.items()],
            )
            counts["cooccurrences"] = len(pairs)
        return counts

    def _fact_rows(self, it: _Item) -> list[dict[str, Any]]:
        """The facts extracted from one stored item (its ``facts`` count set)."""
        facts = extract_facts(
            it.text,
            it.role,
            it.speaker,
            config=self.config.facts,
            entities=[m.name for m in it.mentions],
        )
        it.facts = len(facts)
        return [
            {
                "id": f"{it.id}#f{j}",
                "category": f.category,
                "text": f.text,
                "speaker": f.speaker,
                "role": f.role,
                "confidence": f.confidence,
                "rule": f.rule,
                "source_id": it.id,
            }
            for j, f in enumerate(facts)
        ]

    @staticmethod
    def _result(items: list[_Item], counts: dict[str, int], session_id: str | None) -> IngestResult:
        out = []
        for it in items:
            if it.existing:
                out.append(
                    ItemResult(it.id, it.index, "unchanged", "already stored with the same content")
                )
                continue
            assert it.gate is not None
            out.append(
                ItemResult(
                    id=it.id,
                    index=it.index,
                    decision=it.gate.decision,
                    reason=it.gate.reason,
                    signals=dict(it.gate.signals),
                    merge_target=it.gate.merge_target,
                    entities=[m.name for m in it.mentions] if it.gate.decision == "stored" else [],
                    facts=it.facts,
                )
            )
        stage_ids = sorted({it.stage_id for it in items if it.stage_id})
        return IngestResult(out, stage_ids, session_id, counts)
