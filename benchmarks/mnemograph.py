"""Mnemograph as the system under test, driven through its service layer.

* ``prepare``: a fresh space, then every session through
  :meth:`pipelines.ingest.service.Ingestor.ingest_sessions` with the encoding gate off (benchmarks
  store every turn verbatim), in batches of whole sessions.
* ``recall``: :class:`pipelines.recall.service.Recaller` with ``touch=False`` (no heat side
  effects), ``now`` = the question time and the preset named by the configuration. Only the
  :class:`~benchmarks.sut.QueryInput` (text, time) is used.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Sequence
from typing import Any

from benchmarks.sut import CorpusSession, Hit, IngestStats, QueryInput, Retrieval

RECALL_PRESETS: tuple[str, ...] = ("fulltext", "dense", "fused", "fused_rerank", "fast", "full")
"""Recall configurations, in report order (:data:`benchmarks.presets.BENCH_PRESETS`): BM25 only,
dense only, fused (RRF), fused + rerank, full without late interaction (``fast``: query
understanding, session documents, selection), full."""
PRESET_LABELS: dict[str, str] = {
    "fulltext": "BM25 only",
    "dense": "dense only",
    "fused": "fused (RRF)",
    "fused_rerank": "fused + rerank",
    "fast": "full − late interaction",
    "full_no_late": "full − late interaction",  # its name in results recorded before "fast"
    "full": "full",
    "full_no_chunks": "full − chunk signals",
    "ref-bm25": "reference BM25 (in memory)",
    "ref-dense": "reference dense (exact, in memory)",
}


def recall_presets() -> dict[str, Any]:
    """Every recall configuration the harness can run, by name."""
    from benchmarks.presets import BENCH_PRESETS

    return dict(BENCH_PRESETS)


def override_tree(pairs: Sequence[str]) -> dict[str, Any]:
    """``FIELD=VALUE`` pairs as the nested mapping a config model's overrides take: ``FIELD``
    is a field or a dotted path into a section, ``VALUE`` JSON (``0.3``, ``false``,
    ``"none"``) or a plain string.

    Raises:
        ValueError: a pair without ``=`` or without a field.
    """
    update: dict[str, Any] = {}
    for pair in pairs:
        path, sep, raw = pair.partition("=")
        path = path.strip()
        if not sep or not path:
            raise ValueError(f"expected FIELD=VALUE, got {pair!r}")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw.strip()
        *sections, name = path.split(".")
        into = update
        for section in sections:
            into = into.setdefault(section, {})
        into[name] = value
    return update


def recall_overrides(pairs: Sequence[str]) -> Any:
    """The default RecallConfig with ``FIELD=VALUE`` overrides, or None without overrides.
    ``FIELD`` is a field or a dotted path into a section (``late_interaction.weight``);
    ``VALUE`` is JSON (``0.3``, ``false``, ``"none"``), or a plain string. The config's own
    model validates them (:func:`pipelines.overrides.merge_overrides`), so types and bounds
    hold.

    Raises:
        ValueError: a pair without ``=``, an unknown field, or a value the field refuses.
    """
    if not pairs:
        return None
    from pipelines.errors import InvalidInput
    from pipelines.overrides import merge_overrides
    from pipelines.recall.config import DEFAULT_RECALL_CONFIG

    update = override_tree(pairs)
    try:
        return merge_overrides(DEFAULT_RECALL_CONFIG, update, "recall")
    except InvalidInput as exc:
        raise ValueError(f"{exc.field}: {exc.message}") from exc


def ingest_batches(
    sessions: Sequence[CorpusSession], max_turns: int, limits: Any = None
) -> list[list[CorpusSession]]:
    """Sessions in batches of at most ``max_turns`` turns and within the write path's limits
    (``limits``: a :class:`mnemograph.client.bulk.Limits`; texts embedded, characters): the
    SDK's splitter, so a session too long for one call goes in parts with its id (each turn
    has its own id: the parts never collide)."""
    from dataclasses import replace

    from mnemograph.client import bulk

    base = limits or bulk.DEFAULT_LIMITS
    budget = replace(base.budget(), max_items_per_request=max_turns, max_request_bytes=2**62)
    costs = [
        [bulk.Cost(len(t.content), 1, bulk.estimate_inputs(t.content, t.speaker,
                                                            budget.embedding_window))
         for t in s.turns]
        for s in sessions
    ]  # fmt: skip
    return [
        [replace(sessions[p.session], turns=sessions[p.session].turns[p.start : p.end])
         for p in batch]
        for batch in bulk.pack(costs, budget, multi=True, part_items=base.max_items_per_request)
    ]  # fmt: skip


def write_limits(ingestor: Any) -> Any:
    """The in-process write path's limits, as the SDK's splitter takes them."""
    from mnemograph.client import bulk

    config = ingestor.config
    window = (
        getattr(ingestor.encoder.embedder, "max_tokens", 0) or bulk.DEFAULT_LIMITS.embedding_window
    )
    return bulk.Limits(
        max_items_per_request=config.max_turns_per_request,
        max_content_chars=config.max_content_chars,
        max_request_chars=config.max_request_chars,
        max_embedding_inputs=config.max_embedding_inputs,
        embedding_window=int(window),
    )


class MnemographSystem:
    def __init__(
        self,
        engine: Any,
        *,
        batch_turns: int = 2000,
        progress: bool = True,
        recall_config: Any = None,
    ) -> None:
        from pipelines.ingest.service import Ingestor

        self.engine = engine
        self.ingestor = Ingestor(engine)
        self.batch_turns = batch_turns
        self.progress = progress
        self._recall_config = recall_config  # None: the service's default RecallConfig
        self._presets = recall_presets()
        self._recaller: Any = None
        self._close_recaller: Any = None

    # ------------------------------------------------------------------ corpus

    def prepare(
        self, space: str, sessions: Sequence[CorpusSession], schemas: bool = True
    ) -> IngestStats:
        """A fresh space holding ``sessions`` (and, with ``schemas``, its stage schemas)."""
        from pipelines import spaces

        spaces.create(
            self.engine.store, spaces.NewSpace(id=space, description="benchmark space (temporary)")
        )
        return self.extend(space, sessions, schemas)

    def extend(
        self, space: str, sessions: Sequence[CorpusSession], schemas: bool = True
    ) -> IngestStats:
        """Ingest more sessions into an existing space; then (``schemas``, not timed) run the
        ``schemas`` job, as a deployment's scheduler would: reads never build a schema."""
        from pipelines.ingest.service import IngestOptions, SessionIn, TurnIn

        options = IngestOptions(gate=False)
        t0 = time.perf_counter()
        turns = 0
        batches = ingest_batches(sessions, self.batch_turns, write_limits(self.ingestor))
        total = sum(len(s.turns) for s in sessions)
        bar = _bar(total, f"ingest {space}", self.progress and len(batches) > 1)
        for batch in batches:
            payload = [
                SessionIn(
                    session_id=s.id,
                    started_at=s.started_at,
                    stage=s.stage,
                    turns=[
                        TurnIn(
                            role=t.role,  # type: ignore[arg-type]
                            content=t.content,
                            id=t.id,
                            speaker=t.speaker,
                            time=t.time,
                        )
                        for t in s.turns
                    ],
                )
                for s in batch
            ]
            self.ingestor.ingest_sessions(space, payload, options)
            turns += sum(len(s.turns) for s in batch)
            if bar is not None:
                bar.update(sum(len(s.turns) for s in batch))
        if bar is not None:
            bar.close()
        seconds = time.perf_counter() - t0
        if schemas:
            from pipelines.consolidate.runner import Runner, run_job

            run_job(self.engine, space, "schemas", runner=Runner("benchmark"))
        pool = self.pool_size(space)
        return IngestStats(
            turns=turns,
            seconds=seconds,
            memories=pool["memories"],
            sessions=pool["sessions"],
            entities=pool.get("entities", 0),
            cooccurrences=pool.get("cooccurrences", 0),
            facts=pool.get("facts", 0),
            stages=pool.get("stages", 0),
        )

    def pool_size(self, space: str) -> dict[str, int]:
        from benchmarks.cypher import statements
        from pipelines import spaces

        out = spaces.counts(self.engine.store, space)
        edges = statements(self.engine.store).read("space_edge_counts", space=space)[0]
        out.update(edges)
        return out

    def drop(self, space: str) -> None:
        """Delete the space and everything in it (a space that does not exist is fine)."""
        from pipelines import spaces
        from pipelines.errors import NotFound

        with contextlib.suppress(NotFound):
            spaces.delete(self.engine.store, space)

    # ------------------------------------------------------------------ questions

    @property
    def recaller(self) -> Any:
        if self._recaller is None:
            from pipelines.recall.config import DEFAULT_RECALL_CONFIG
            from pipelines.recall.service import open_recaller

            config = self._recall_config or DEFAULT_RECALL_CONFIG
            self._recaller, self._close_recaller = open_recaller(self.engine, config)
        return self._recaller

    def close(self) -> None:
        """Shut down the recaller's threads (the engine is the caller's)."""
        if self._close_recaller is not None:
            self._close_recaller()
            self._recaller = self._close_recaller = None

    def recall(
        self, space: str, query: QueryInput, config: str, k: int, order: str | None = None
    ) -> Retrieval:
        from pipelines.recall.request import RecallRequest

        ordered = {} if order is None else {"order": order}  # None: the API's default order
        req = RecallRequest(query=query.text, k=k, touch=False, now=query.question_time, **ordered)
        t0 = time.perf_counter()
        resp = self.recaller.recall(space, req, preset=self._presets[config])
        latency = (time.perf_counter() - t0) * 1000
        hits = [
            Hit(
                id=str(r.id),
                session_id=r.session_id,
                content=r.content or "",
                score=float(r.score or 0.0),
                speaker=r.speaker,
                time=_native(r.time),
            )
            for r in resp.results
        ]
        return Retrieval(
            hits=hits,
            abstain=bool(resp.abstain),
            candidates=resp.candidates,
            latency_ms=latency,
            timings_ms=dict(resp.timings_ms),
            intent=resp.intent,
        )


def _native(t: Any) -> Any:
    to_native = getattr(t, "to_native", None)
    return to_native() if callable(to_native) else t


def _bar(total: int, desc: str, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="turn", leave=False, smoothing=0.1)
