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
import time
from collections.abc import Sequence
from typing import Any

from benchmarks.sut import CorpusSession, Hit, IngestStats, QueryInput, Retrieval

RECALL_PRESETS: tuple[str, ...] = (
    "fulltext",
    "dense",
    "fused",
    "fused_rerank",
    "full_no_late",
    "full",
)
"""Recall configurations, in report order: BM25 only, dense only, fused (RRF), fused + rerank,
full without late interaction (query understanding, session documents, selection), full."""
PRESET_LABELS: dict[str, str] = {
    "fulltext": "BM25 only",
    "dense": "dense only",
    "fused": "fused (RRF)",
    "fused_rerank": "fused + rerank",
    "full_no_late": "full − late interaction",
    "full": "full",
    "ref-bm25": "reference BM25 (in memory)",
    "ref-dense": "reference dense (exact, in memory)",
}


class RecallServiceUnavailable(RuntimeError):
    """pipelines.recall.service is not importable (yet)."""


def load_recall_api() -> tuple[Any, Any, dict[str, Any]]:
    """(Recaller, RecallRequest, PRESETS) or a clear error."""
    try:
        from pipelines.recall.presets import PRESETS
        from pipelines.recall.service import Recaller, RecallRequest
    except ImportError as exc:
        raise RecallServiceUnavailable(
            "the recall service (pipelines.recall.service / pipelines.recall.presets) is not "
            f"available: {exc}. The recall benchmarks need it."
        ) from exc
    return Recaller, RecallRequest, PRESETS


def recall_overrides(pairs: Sequence[str]) -> Any:
    """The default RecallConfig with ``FIELD=VALUE`` overrides (validated by the config's own
    model, so types and bounds hold), or None without overrides.

    Raises:
        ValueError: a pair without ``=``, an unknown field, or a value the field refuses.
    """
    if not pairs:
        return None
    from pydantic import ValidationError

    from pipelines.recall.config import DEFAULT_RECALL_CONFIG, RecallConfig

    update: dict[str, str] = {}
    for pair in pairs:
        field_name, sep, value = pair.partition("=")
        field_name = field_name.strip()
        if not sep or not field_name:
            raise ValueError(f"expected FIELD=VALUE, got {pair!r}")
        if field_name not in RecallConfig.model_fields:
            raise ValueError(f"unknown RecallConfig field {field_name!r}")
        update[field_name] = value.strip()
    try:
        return RecallConfig.model_validate({**DEFAULT_RECALL_CONFIG.model_dump(), **update})
    except ValidationError as exc:
        raise ValueError(str(exc)) from exc


def ingest_batches(sessions: Sequence[CorpusSession], max_turns: int) -> list[list[CorpusSession]]:
    """Group whole sessions into batches of at most ``max_turns`` turns (a longer session is a
    batch of its own)."""
    batches: list[list[CorpusSession]] = []
    cur: list[CorpusSession] = []
    n = 0
    for s in sessions:
        if cur and n + len(s.turns) > max_turns:
            batches.append(cur)
            cur, n = [], 0
        cur.append(s)
        n += len(s.turns)
    if cur:
        batches.append(cur)
    return batches


class MnemographSystem:
    def __init__(
        self,
        engine: Any,
        *,
        batch_turns: int = 2000,
        progress: bool = True,
        recall_api: tuple[Any, Any, dict[str, Any]] | None = None,
        recall_config: Any = None,
    ) -> None:
        from pipelines.ingest.service import Ingestor

        self.engine = engine
        self.ingestor = Ingestor(engine)
        self.batch_turns = batch_turns
        self.progress = progress
        self._recall_api = recall_api
        self._recall_config = recall_config  # None: the service's default RecallConfig
        self._recaller: Any = None

    # ------------------------------------------------------------------ corpus

    def prepare(self, space: str, sessions: Sequence[CorpusSession]) -> IngestStats:
        """A fresh space holding ``sessions``."""
        from pipelines import spaces

        spaces.create(
            self.engine.store, spaces.NewSpace(id=space, description="benchmark space (temporary)")
        )
        return self.extend(space, sessions)

    def extend(self, space: str, sessions: Sequence[CorpusSession]) -> IngestStats:
        """Ingest more sessions into an existing space."""
        from pipelines.ingest.service import IngestOptions, SessionIn, TurnIn

        options = IngestOptions(gate=False)
        t0 = time.perf_counter()
        turns = 0
        batches = ingest_batches(sessions, self.batch_turns)
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
            recaller_cls, _, _ = self._api()
            if self._recall_config is None:
                self._recaller = recaller_cls(self.engine)
            else:
                self._recaller = recaller_cls(self.engine, self._recall_config)
        return self._recaller

    def _api(self) -> tuple[Any, Any, dict[str, Any]]:
        if self._recall_api is None:
            self._recall_api = load_recall_api()
        return self._recall_api

    def recall(
        self, space: str, query: QueryInput, config: str, k: int, order: str | None = None
    ) -> Retrieval:
        _, request_cls, _ = self._api()
        ordered = {} if order is None else {"order": order}  # None: the API's default order
        req = request_cls(
            query=query.text, k=k, touch=False, now=query.question_time, preset=config, **ordered
        )
        t0 = time.perf_counter()
        resp = self.recaller.recall(space, req)
        latency = (time.perf_counter() - t0) * 1000
        hits = [
            Hit(
                id=str(r.id),
                session_id=getattr(r, "session_id", None),
                content=getattr(r, "content", "") or "",
                score=float(getattr(r, "score", 0.0) or 0.0),
                speaker=getattr(r, "speaker", None),
                time=_native(getattr(r, "time", None)),
            )
            for r in resp.results
        ]
        return Retrieval(
            hits=hits,
            abstain=bool(getattr(resp, "abstain", False)),
            candidates=getattr(resp, "candidates", None),
            latency_ms=latency,
            timings_ms=dict(getattr(resp, "timings_ms", None) or {}),
            intent=getattr(resp, "intent", None),
        )


def _native(t: Any) -> Any:
    to_native = getattr(t, "to_native", None)
    return to_native() if callable(to_native) else t


def _bar(total: int, desc: str, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="turn", leave=False, smoothing=0.1)
