"""The write path: conversation sessions and free memories into the graph.

One request is one transaction: either every memory, entity, edge and fact of it is stored, or
none. The expensive, pure work runs before the transaction opens and the transaction only
writes (:mod:`pipelines.ingest.writer`): encoding (:mod:`pipelines.ingest.encode`: embeddings
and token vectors, long memories chunked) and analysis (:mod:`pipelines.ingest.analyse`:
spaCy entities, facts, standing statements, in a worker thread). A multi-session call is
written in groups of whole sessions, one transaction per group (:func:`_groups`). With the
gate off, each group is encoded (the encoder uses every core), then analysed while its
memories are written (spaCy on one core, the driver and Neo4j on the other; beside encoding,
the analysis only slowed the encoder), and its entities and facts are written once the
analysis is done. With the gate on, every item is encoded and analysed first, as the gate
compares each with the space as it was before the call and with the earlier items of it.

Idempotency: memory ids are client ids or derived from the session and turn position, so a
re-sent session finds its ids present with the same content hash and reports them
``unchanged`` without touching counts or co-occurrence weights. The same id with different
content is a conflict (409) naming the turn.

Bounded work: before any model runs, the chunks of the new items are planned and a request
needing more than ``IngestConfig.max_embedding_inputs`` texts embedded is refused (422, naming
where to split it; :mod:`pipelines.ingest.limits`). A
:class:`~pipelines.ingest.deadline.Deadline`, when given, is checked between batches and before
every write; a call it stops has written nothing, except, in a multi-session call, the sessions
committed before (the error names the first one that was not).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np

from pipelines import spaces
from pipelines.engine import Engine
from pipelines.errors import Conflict, DomainError, InvalidInput
from pipelines.graph import Tx, mark
from pipelines.ingest.analyse import Analyser
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG, GateConfig, IngestConfig
from pipelines.ingest.deadline import ClientGone, Deadline, DeadlineExceeded, check
from pipelines.ingest.encode import ChunkEncoder
from pipelines.ingest.extractor import EntityExtractor
from pipelines.ingest.gate import DuplicateCandidate, GateDecision, compute_signals, decide
from pipelines.ingest.inputs import (
    Decision,
    IngestOptions,
    IngestResult,
    ItemResult,
    MemoryIn,
    Role,
    SessionIn,
    TurnIn,
)
from pipelines.ingest.intake import memory_items, session_items
from pipelines.ingest.items import Item
from pipelines.ingest.limits import check_limit, check_request_size, check_work
from pipelines.ingest.stages import default_stage_detector
from pipelines.ingest.writer import Writer
from pipelines.overrides import merge_overrides

__all__ = [
    "Decision",
    "IngestOptions",
    "IngestResult",
    "Ingestor",
    "ItemResult",
    "MemoryIn",
    "Role",
    "SessionIn",
    "TurnIn",
]

GATE_CONTEXT_TURNS = 8  # previous turns of the batch used as novelty context
GATE_RECENT_MEMORIES = 16  # most recent stored memories used as novelty context
GATE_DUPLICATE_CANDIDATES = 5


class Ingestor:
    """Write-path service. Holds the engine, the configuration and one analysis worker."""

    def __init__(self, engine: Engine, config: IngestConfig = DEFAULT_INGEST_CONFIG) -> None:
        self.engine = engine
        self.config = config
        self.encoder = ChunkEncoder(engine.embedder, config)
        self.analyser = Analyser(engine.nlp, config)
        self.detector = default_stage_detector(config.stages)
        self.writer = Writer(engine.store, config, self.detector)

    @property
    def extractor(self) -> EntityExtractor:
        return self.analyser.extractor

    def embedding_texts(self, turns: Sequence[tuple[str, str | None]]) -> list[str]:
        """The texts the encoder reads for these ``(content, speaker)`` memories: one per
        memory that fits the embedder's window, one per chunk of a longer one."""
        return self.encoder.embedding_texts(turns)

    # ------------------------------------------------------------------ public API

    def ingest_session(
        self,
        space: str,
        session: SessionIn,
        options: IngestOptions | None = None,
        deadline: Deadline | None = None,
    ) -> IngestResult:
        return self.ingest_sessions(space, [session], options, deadline)[0]

    def ingest_sessions(
        self,
        space: str,
        sessions: Sequence[SessionIn],
        options: IngestOptions | None = None,
        deadline: Deadline | None = None,
    ) -> list[IngestResult]:
        """Ingest several sessions, written in groups of whole sessions, one transaction
        per group. Every session is validated before anything is written; models run over
        the same groups."""
        options = options or IngestOptions()
        space_cfg = self._space_gate(space)
        prepared: list[tuple[SessionIn, list[Item]]] = []
        labelled: list[tuple[str, Item]] = []
        for si, session in enumerate(sessions):
            if not session.turns:
                raise InvalidInput("a session needs at least one turn", field="turns")
            prefix = "turns" if len(sessions) == 1 else f"sessions.{si}.turns"
            prepared.append((session, session_items(self.config, session, prefix)))
            labelled.extend((f"{prefix}.{it.index}", it) for it in prepared[-1][1])
        all_items = [it for _, items in prepared for it in items]
        check_request_size(self.config, all_items, "turns" if len(sessions) == 1 else "sessions")
        self._mark_existing(space, all_items, "turns")
        check_work(self.encoder, self.config, labelled, "turns")
        check(deadline)
        gate_on = options.gate if options.gate is not None else space_cfg.enabled
        groups = list(_groups(prepared, self.config.group_turns))
        results: list[IngestResult] = []
        try:
            self._pipeline(space, groups, gate_on, space_cfg, options, deadline, results)
        except (DeadlineExceeded, ClientGone) as exc:
            if results and len(sessions) > 1:
                raise mark(_stopped_after(exc, len(results), len(sessions))) from exc
            raise
        except Exception as exc:
            if results:  # groups were committed before the failure
                mark(exc)
            raise
        return results

    def _pipeline(
        self,
        space: str,
        groups: Sequence[Sequence[tuple[SessionIn, list[Item]]]],
        gate_on: bool,
        space_cfg: GateConfig,
        options: IngestOptions,
        deadline: Deadline | None,
        results: list[IngestResult],
    ) -> None:
        """Compute, then write, one group at a time; ``results`` gets each session's result
        once its group is committed. With the gate off, a group is encoded first (the
        encoder uses every core), then analysed in a worker thread while its memories are
        written (spaCy on one core, Neo4j on the other); its entities and facts are written
        once the analysis is done. With the gate on, every group is encoded and analysed
        before anything is written (the gate needs both)."""

        def items_of(part: Sequence[Sequence[tuple[SessionIn, list[Item]]]]) -> list[Item]:
            return [it for group in part for _, group_items in group for it in group_items]

        with ThreadPoolExecutor(1, thread_name_prefix="ingest") as pool:
            if gate_on:
                self._compute(space, items_of(groups), space_cfg, options, pool, deadline)
            for group in groups:
                analysed: Callable[[], None] = _done
                if not gate_on:
                    analysed = self._encode(items_of([group]), options, pool, deadline)
                self._write_group(space, group, deadline, results, analysed)

    def _write_group(
        self,
        space: str,
        group: Sequence[tuple[SessionIn, list[Item]]],
        deadline: Deadline | None,
        results: list[IngestResult],
        analysed: Callable[[], None],
    ) -> None:
        check(deadline)
        items = [it for _, group_items in group for it in group_items]
        counts = self.writer.write_sessions(
            space,
            [(session.session_id, session.stage, group_items) for session, group_items in group],
            partial(self._recheck, space, items, "turns", deadline),
            analysed,
        )
        for (session, group_items), session_counts in zip(group, counts, strict=True):
            results.append(self._result(group_items, session_counts, session.session_id))

    def add_memories(
        self,
        space: str,
        memories: Sequence[MemoryIn],
        options: IngestOptions | None = None,
        deadline: Deadline | None = None,
    ) -> IngestResult:
        options = options or IngestOptions()
        space_cfg = self._space_gate(space)
        if not memories:
            raise InvalidInput("at least one memory is required", field="memories")
        check_limit(self.config, len(memories), "memories")
        items = memory_items(self.config, memories)
        check_request_size(self.config, items, "memories")
        self._mark_existing(space, items, "memories")
        check_work(
            self.encoder, self.config, [(f"memories.{it.index}", it) for it in items], "memories"
        )
        check(deadline)
        with ThreadPoolExecutor(1, thread_name_prefix="ingest") as pool:
            self._compute(space, items, space_cfg, options, pool, deadline)
        check(deadline)
        counts = self.writer.write_free(
            space, items, partial(self._recheck, space, items, "memories", deadline)
        )
        return self._result(items, counts, None)

    # ------------------------------------------------------------------ preparation

    def _space_gate(self, space: str) -> GateConfig:
        """The gate configuration with the space's ``settings.gate`` overrides (validated:
        a bad one is a 422 naming its field)."""
        data = spaces.get(self.engine.store, space)  # 404 for an unknown space
        overrides = (data.get("settings") or {}).get("gate")
        return merge_overrides(self.config.gate, overrides, "settings.gate")

    def _stop(self, deadline: Deadline | None) -> None:
        """Between batches of long work: stop when the deadline passed, the client left, or
        Neo4j is known to be down (nothing is written then; the write would fail anyway)."""
        check(deadline)
        self.engine.store.check_available()

    def _recheck(
        self, space: str, items: list[Item], fld: str, deadline: Deadline | None, tx: Tx
    ) -> None:
        """Inside the write transaction, under the space's lock and before any write: the
        deadline, then what already exists."""
        check(deadline)
        self._mark_existing(space, items, fld, tx)

    def _mark_existing(self, space: str, items: list[Item], fld: str, tx: Tx | None = None) -> None:
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
        self,
        space: str,
        items: list[Item],
        gate_cfg: GateConfig,
        options: IngestOptions,
        pool: ThreadPoolExecutor,
        deadline: Deadline | None = None,
    ) -> None:
        """Embeddings, chunks, entities, facts and gate decisions of the new items (no
        writes): analysis in the worker thread while this thread encodes."""
        new = [it for it in items if not it.existing]
        if not new:
            return
        stop = partial(self._stop, deadline)
        analysis = pool.submit(self.analyser.analyse, new, stop)
        try:
            self.encoder.encode(new, stop)
        finally:
            analysis.result()  # re-raises a failure of the analysis; never leaves it running
        self._fact_vectors(new)
        gate_on = options.gate if options.gate is not None else gate_cfg.enabled
        if not gate_on:
            _store_verbatim(new, options)
            return
        self._gate(space, new, gate_cfg.model_copy(update={"enabled": True}), options)

    def _encode(
        self,
        items: list[Item],
        options: IngestOptions,
        pool: ThreadPoolExecutor,
        deadline: Deadline | None = None,
    ) -> Callable[[], None]:
        """Gate off: encode the new items, start their analysis (and the embedding of the
        standing statements it finds) in ``pool`` and return what waits for it (it re-raises
        a failure; a retried transaction may call it again)."""
        new = [it for it in items if not it.existing]
        if not new:
            return _done
        stop = partial(self._stop, deadline)
        self.encoder.encode(new, stop)
        _store_verbatim(new, options)

        def analyse() -> None:
            self.analyser.analyse(new, stop)
            self._fact_vectors(new)

        return pool.submit(analyse).result

    def _fact_vectors(self, new: list[Item]) -> None:
        """Embeddings of the facts found in ``new`` (the embedded categories), of the standing
        statements and of their conditions, in one pass of the embedder."""
        standing = self.analyser.standing_texts(new)
        conditioned = [s for s in standing if s["condition"]]
        rows = [*standing, *self.analyser.fact_rows(new)]
        texts = [r["text"] for r in rows] + [s["condition"] for s in conditioned]
        if not texts:
            return
        vectors = [[float(x) for x in vec] for vec in self.engine.embedder.encode(texts)]
        for row, vec in zip(rows, vectors, strict=False):
            row["embedding"] = vec
        for row, vec in zip(conditioned, vectors[len(rows) :], strict=True):
            row["condition_embedding"] = vec

    def _gate(self, space: str, new: list[Item], cfg: GateConfig, options: IngestOptions) -> None:
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
        accepted: list[tuple[Item, np.ndarray]] = []
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

    @staticmethod
    def _result(items: list[Item], counts: dict[str, int], session_id: str | None) -> IngestResult:
        """Per-item decisions; an item's ``facts`` counts its facts and standing statements."""
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
                    facts=len(it.facts) + len(it.standing) if it.gate.decision == "stored" else 0,
                )
            )
        stage_ids = sorted({it.stage_id for it in items if it.stage_id})
        return IngestResult(out, stage_ids, session_id, counts)


def _done() -> None:
    """Nothing to wait for."""


def _store_verbatim(new: Sequence[Item], options: IngestOptions) -> None:
    """Gate off: every new item is stored as given."""
    reason = "forced" if options.force else "gate off: stored verbatim"
    for it in new:
        it.gate = GateDecision(decision="stored", signals={}, reason=reason)


def _groups(
    prepared: Sequence[tuple[SessionIn, list[Item]]], min_items: int
) -> Iterator[list[tuple[SessionIn, list[Item]]]]:
    """Consecutive whole sessions, at least ``min_items`` turns per group (the last may hold
    fewer; ``IngestConfig.group_turns``). A session that repeats a session id or a memory id
    of the group starts a new one, so that it meets what the group stored, as it would in
    a call of its own."""
    group: list[tuple[SessionIn, list[Item]]] = []
    sessions: set[str] = set()
    ids: set[str] = set()
    for entry in prepared:
        session, items = entry
        own = {it.id for it in items}
        if group and (session.session_id in sessions or not ids.isdisjoint(own)):
            yield group
            group, sessions, ids = [], set(), set()
        group.append(entry)
        sessions.add(session.session_id)
        ids |= own
        if len(ids) >= min_items:
            yield group
            group, sessions, ids = [], set(), set()
    if group:
        yield group


def _stopped_after(exc: DeadlineExceeded | ClientGone, done: int, total: int) -> DomainError:
    """The error of a multi-session call stopped after ``done`` sessions were committed."""
    written = (
        f"sessions 0 to {done - 1} of {total} were stored before it stopped (in groups of "
        f"whole sessions, one transaction each), the others were not: send sessions.{done} "
        "onwards again"
    )
    if isinstance(exc, DeadlineExceeded):
        return DeadlineExceeded(exc.reason, exc.retry_after, written, f"sessions.{done}")
    return ClientGone(exc.reason, written, f"sessions.{done}")
