"""Writing a batch of prepared memories: one transaction per group of sessions (or free batch).

Everything expensive (embeddings, chunks, entities, facts, gate decisions) was computed before
the transaction opened (:mod:`pipelines.ingest.service`); here the batch is only written, each
kind of node with one ``UNWIND`` statement: stages and the session, memories, chunks of long
memories, entities (promoted by :mod:`pipelines.ingest.entity_graph` against the space's state,
read in the same transaction), co-occurrences, entity and stage vectors
(:mod:`pipelines.ingest.vectors`), facts, standing instructions and preferences with their
supersessions (:mod:`pipelines.ingest.standing`), and the gate's merges.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

import numpy as np

from pipelines import session_documents, spaces
from pipelines.graph import GraphStore, Tx
from pipelines.ingest.config import IngestConfig
from pipelines.ingest.entity_graph import (
    Candidate,
    MemoryMentions,
    plan_entities,
    resolve_aliases,
)
from pipelines.ingest.items import Item
from pipelines.ingest.stages import (
    SessionSpan,
    StageDetector,
    StageState,
    assign_stages,
    stage_spans,
)
from pipelines.ingest.standing import Standing, supersedes
from pipelines.ingest.vectors import group_vectors, vector_rows
from pipelines.models.late_interaction import TOKEN_FORMAT

__all__ = ["Writer"]

CHUNK_ROWS_PER_STATEMENT = 256  # bounds one statement's parameters (a 2 MB memory: ~3,000)


class Writer:
    """Writes prepared items (module docstring). Stateless apart from its configuration."""

    def __init__(self, store: GraphStore, config: IngestConfig, detector: StageDetector) -> None:
        self.store = store
        self.config = config
        self.detector = detector

    # ------------------------------------------------------------------ transactions

    def write_sessions(
        self,
        space: str,
        sessions: Sequence[tuple[str, str | None, list[Item]]],
        recheck: Callable[[Tx], None],
        analysed: Callable[[], None] = lambda: None,
    ) -> list[dict[str, int]]:
        """Consecutive sessions, each ``(session_id, stage label, items)``, in ONE
        transaction: the space's write lock first, then ``recheck`` (what already exists,
        again under the lock), then stages, sessions, memories and links; then, once
        ``analysed`` returns (the items' entities and facts are known: the analysis may run
        beside the first phase), each session's entities and facts, in order. Returns each
        session's counts, in order."""
        spans = [
            SessionSpan(
                sid, min(it.event_time for it in items), max(it.event_time for it in items), stage
            )
            for sid, stage, items in sessions
        ]

        def work(tx: Tx) -> list[dict[str, int]]:
            spaces.lock_for_write(tx, space)
            recheck(tx)
            stage_of = self._assign_stages(tx, space, spans)
            tails = self._continue_sessions(tx, space, sessions)
            counts = []
            pairs: list[tuple[Item, Item]] = []
            touched = []
            for span, (sid, _, items) in zip(spans, sessions, strict=True):
                for it in items:
                    it.stage_id = stage_of[sid]
                tx.run(
                    "ingest/upsert_session",
                    space=space,
                    session_id=sid,
                    started_at=span.start,
                    ended_at=span.end,
                    stage_id=stage_of[sid],
                )
                counts.append(self._write_memories(tx, space, items))
                pairs.extend(pairwise([it for it in items if _in_session(it)]))
                if any(it.stored for it in items):
                    touched.append(sid)
            self._link_next(tx, space, pairs)
            if tails:
                tx.run("ingest/create_next", space=space, pairs=tails)
            session_documents.refresh(tx, space, touched, self.config.session_document_max_memories)
            analysed()
            # Entity planning counts the space's memories up to each session, as if the
            # sessions had been written one after another.
            later = sum(it.stored for _, _, items in sessions for it in items)
            for session_counts, (_, _, items) in zip(counts, sessions, strict=True):
                later -= sum(it.stored for it in items)
                session_counts.update(self._write_derived(tx, space, items, later))
            return [{k: v for k, v in c.items() if v} for c in counts]

        return self.store.write_tx(work)

    def write_free(
        self, space: str, items: list[Item], recheck: Callable[[Tx], None]
    ) -> dict[str, int]:
        """Free memories in one transaction, locked and rechecked like :meth:`write_sessions`."""
        own = [it for it in items if it.duplicate_of is None]
        spans = [SessionSpan(f"memory:{it.id}", it.event_time, None, it.stage_label) for it in own]

        def work(tx: Tx) -> dict[str, int]:
            spaces.lock_for_write(tx, space)
            recheck(tx)
            stage_of = self._assign_stages(tx, space, spans)
            for it in items:
                it.stage_id = stage_of[f"memory:{it.id}"]  # a duplicate's is its first's
            return self._write_items(tx, space, items)

        return self.store.write_tx(work)

    # ------------------------------------------------------------------ stages

    def _assign_stages(self, tx: Tx, space: str, spans: list[SessionSpan]) -> dict[str, str]:
        rows = tx.run("ingest/last_stage", space=space)
        last = None
        if rows and rows[0]["start"] is not None:
            r = rows[0]
            last = StageState(r["key"], r["start"].to_native(), r["end"].to_native(), r["kind"])
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

    # ------------------------------------------------------------------ items

    def _write_items(self, tx: Tx, space: str, items: list[Item]) -> dict[str, int]:
        counts = self._write_memories(tx, space, items)
        counts.update(self._write_derived(tx, space, items))
        return {k: v for k, v in counts.items() if v}

    def _write_memories(self, tx: Tx, space: str, items: list[Item]) -> Counter[str]:
        """The stored items' memories, chunks and stage vectors (what needs no analysis)."""
        stored = [it for it in items if it.stored]
        counts = Counter[str]()
        if stored:
            counts["memories"] = self._memories(tx, space, stored)
            counts["chunks"] = self._chunks(tx, space, stored)
            if self.config.stage_vectors:
                self._stage_vectors(tx, space, stored)
        return counts

    def _continue_sessions(
        self, tx: Tx, space: str, sessions: Sequence[tuple[str, str | None, list[Item]]]
    ) -> list[list[str]]:
        """A session arriving in parts: the new turns of a request continue the session's
        earlier memories (those not in the request): numbered after its last turn index,
        and the first of them linked NEXT from that last memory. Returns those links."""
        rows = tx.run(
            "ingest/session_tails",
            space=space,
            sessions=[{"id": sid, "n": len(items) + 1} for sid, _, items in sessions],
        )
        last_of = {r["session_id"]: r["last"] for r in rows}
        links: list[list[str]] = []
        for sid, _, items in sessions:
            ids = {it.id for it in items}
            tail = next((m for m in last_of.get(sid, []) if m["id"] not in ids), None)
            if tail is None:
                continue
            offset = int(tail["turn_index"]) + 1
            for it in items:
                if not it.existing and it.turn_index is not None:
                    it.turn_index = offset + it.index
            first = next((it for it in items if _in_session(it)), None)
            if first is not None and not first.existing:
                links.append([str(tail["id"]), first.id])
        return links

    def _link_next(self, tx: Tx, space: str, pairs: Sequence[tuple[Item, Item]]) -> None:
        """NEXT links between consecutive turns: created outright where either end is new
        (it has no links yet), merged between two memories that already existed."""
        new = [[a.id, b.id] for a, b in pairs if not (a.existing and b.existing)]
        old = [[a.id, b.id] for a, b in pairs if a.existing and b.existing]
        if new:
            tx.run("ingest/create_next", space=space, pairs=new)
        if old:
            tx.run("ingest/link_next", space=space, pairs=old)

    def _write_derived(self, tx: Tx, space: str, items: list[Item], later: int = 0) -> Counter[str]:
        """The stored items' entities and facts, and the gate's merges (what the analysis
        found); ``later`` memories of the transaction belong to sessions after these items."""
        stored = [it for it in items if it.stored]
        counts = Counter[str]()
        if stored:
            counts.update(self._entities(tx, space, stored, later))
            counts.update(self._facts(tx, space, stored))
        merges = [
            {"target": it.gate.merge_target}
            for it in items
            if not it.existing and it.gate and it.gate.decision == "merged"
        ]
        if merges:
            tx.run("ingest/note_restatements", space=space, merges=merges)
            counts["merged"] = len(merges)
        return counts

    def _memories(self, tx: Tx, space: str, stored: list[Item]) -> int:
        rows = []
        for it in stored:
            signals = it.gate.signals if it.gate else {}
            rows.append(
                {
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
                    "importance": float(signals.get("salience") or 0.5) if signals else 0.5,
                    "gate": json.dumps(signals) if signals else None,
                    "metadata": json.dumps(it.metadata, sort_keys=True) if it.metadata else None,
                    "caption": f"{it.speaker or it.role}: {it.text[:60]}",
                    "embedding": it.embedding.tolist() if it.embedding is not None else None,
                    "tokens": it.tokens,
                    "token_format": TOKEN_FORMAT if it.tokens is not None else None,
                }
            )
        res = tx.run(
            "ingest/create_memories", space=space, space_tag=spaces.fulltext_tag(space), rows=rows
        )
        return int(res[0]["created"]) if res else 0

    def _chunks(self, tx: Tx, space: str, stored: list[Item]) -> int:
        rows = [
            {
                "id": f"{it.id}#c{c.index}",
                "memory": it.id,
                "index": c.index,
                "of": len(it.chunks),
                "start": c.start,
                "end": c.end,
                "text": c.text,
                "embedding": c.embedding.tolist() if c.embedding is not None else None,
                "tokens": c.tokens,
                "token_format": TOKEN_FORMAT if c.tokens is not None else None,
            }
            for it in stored
            for c in it.chunks
        ]
        created = 0
        tag = spaces.fulltext_tag(space)
        for i in range(0, len(rows), CHUNK_ROWS_PER_STATEMENT):
            part = rows[i : i + CHUNK_ROWS_PER_STATEMENT]
            res = tx.run("ingest/create_chunks", space=space, space_tag=tag, rows=part)
            created += int(res[0]["chunks"]) if res else 0
        return created

    def _entities(self, tx: Tx, space: str, stored: list[Item], later: int) -> dict[str, int]:
        cfg = self.config.entities
        keys = sorted({m.key for it in stored for m in it.mentions})
        if not keys:
            return {}
        aliases = {
            r["alias"]: (r["canonical"], r["name"], r["kind"])
            for r in tx.run("ingest/entity_aliases", space=space, keys=keys)
        }
        if aliases:
            for it in stored:
                it.mentions = resolve_aliases(it.mentions, aliases)
            keys = sorted({m.key for it in stored for m in it.mentions})
        state = tx.run("ingest/entity_state", space=space, keys=keys)[0]
        known = {e["key"]: int(e["memories"]) for e in state["entities"]}
        candidates = {
            c["key"]: Candidate(
                c["key"], c["memory"], int(c["count"]), int(c["sightings"]), c["seen"].to_native()
            )
            for c in state["candidates"]
        }
        plan = plan_entities(
            [MemoryMentions(it.id, it.event_time, it.mentions) for it in stored],
            known,
            candidates,
            int(state["memories"]) - later,
            cfg,
        )
        counts: dict[str, int] = {}
        if plan.entities:
            res = tx.run(
                "ingest/merge_entities",
                space=space,
                entities=plan.entities,
                mentions=plan.mentions,
            )
            counts["entities"] = len(plan.entities)
            counts["mentions"] = int(res[0]["mentions"]) if res else 0
        if plan.pairs:
            tx.run(
                "ingest/add_cooccurrence",
                space=space,
                pairs=[{"a": a, "b": b, "w": w} for (a, b), w in plan.pairs.items()],
            )
            counts["cooccurrences"] = len(plan.pairs)
        if plan.promoted:
            tx.run("ingest/delete_candidates", space=space, keys=plan.promoted)
        if plan.candidates:
            tx.run("ingest/upsert_candidates", space=space, candidates=plan.candidates)
            counts["candidates"] = len(plan.candidates)
        excess = int(state["candidate_count"]) + len(plan.candidates) - cfg.max_candidates
        if excess > 0:
            tx.run("ingest/prune_candidates", space=space, excess=excess)
        for it in stored:  # the item reports the entities it mentions, candidates left out
            kept = set(plan.keys_of(it.id))
            it.mentions = [m for m in it.mentions if m.key in kept]
        if self.config.entity_vectors and plan.entities:
            self._entity_vectors(tx, space, stored, plan.mentions, state)
        return counts

    def _entity_vectors(
        self,
        tx: Tx,
        space: str,
        stored: list[Item],
        mentions: Sequence[dict[str, Any]],
        state: dict[str, Any],
    ) -> None:
        vectors = {it.id: it.embedding for it in stored}
        vectors.update({c["memory"]: c["embedding"] for c in state["candidates"]})
        current = {
            e["key"]: (e["embedding"], int(e["embedding_n"] or 0)) for e in state["entities"]
        }
        additions = group_vectors((m["key"], vectors.get(m["memory"])) for m in mentions)
        rows = vector_rows(additions, current)
        if rows:
            tx.run("ingest/set_entity_vectors", space=space, rows=rows)

    def _stage_vectors(self, tx: Tx, space: str, stored: list[Item]) -> None:
        additions = group_vectors((it.stage_id or "", it.embedding) for it in stored)
        additions.pop("", None)
        if not additions:
            return
        rows = tx.run("ingest/stage_vectors", space=space, ids=sorted(additions))
        current = {r["id"]: (r["embedding"], int(r["n"])) for r in rows}
        out = vector_rows(additions, current)
        if out:
            tx.run("ingest/set_stage_vectors", space=space, rows=out)

    # ------------------------------------------------------------------ facts

    def _facts(self, tx: Tx, space: str, stored: list[Item]) -> dict[str, int]:
        counts: dict[str, int] = {}
        rows = [f for it in stored for f in it.facts]
        if rows:
            res = tx.run("ingest/create_facts", space=space, facts=rows)
            counts["facts"] = int(res[0]["facts"]) if res else 0
        standing = [f for it in stored for f in it.standing]
        if standing:
            tx.run("ingest/create_standing", space=space, facts=standing)
            counts["standing"] = len(standing)
            counts["superseded"] = self._supersede_standing(tx, space, standing)
        return counts

    def _supersede_standing(self, tx: Tx, space: str, new: list[dict[str, Any]]) -> int:
        """New statements retire the active ones they change (oldest first, in batch order)."""
        cfg = self.config.facts
        fresh = {f["id"] for f in new}
        rows = tx.run(
            "ingest/standing_active", space=space, speakers=sorted({f["speaker"] for f in new})
        )
        pools: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            if r["id"] not in fresh:
                pools.setdefault(r["speaker"], []).append(dict(r))
        retired = 0
        now = datetime.now(UTC)
        for f in new:
            pool = pools.setdefault(f["speaker"], [])
            idx = supersedes(
                _standing(f),
                np.asarray(f["embedding"], dtype=np.float32),
                [(_standing(p), np.asarray(p["embedding"], dtype=np.float32)) for p in pool],
                cfg.restate_similarity,
                cfg.change_similarity,
            )
            if idx is not None:
                old = pool.pop(idx)
                tx.run(
                    "consolidate/supersede_fact",
                    space=space,
                    older=old["id"],
                    newer=f["id"],
                    id=str(uuid.uuid4()),
                    reason=f"{f['category']} changed: {f['text']!r} replaces {old['text']!r}",
                    now=now,
                    by="ingest",
                    rule="standing-update",
                    attribute=f["category"],
                    old_value=old["text"],
                    new_value=f["text"],
                    older_memory=old["source_id"],
                    newer_memory=f["source_id"],
                    valid_from=None,  # valid from the newer memory's event time
                )
                retired += 1
            pool.append(f)
        return retired


def _standing(row: dict[str, Any]) -> Standing:
    return Standing(
        row["category"],
        row["text"],
        str(row.get("rule") or ""),
        float(row.get("confidence") or 0.0),
        bool(row.get("change")),
        bool(row.get("negated")),
    )


def _in_session(it: Item) -> bool:
    """A memory of the session's NEXT chain: stored now or before; an id repeated in the
    request is in it once, at its first place."""
    return (it.existing or it.stored) and it.duplicate_of is None
