"""The read path: hybrid recall over one memory space, as a preset's steps over a state.

:class:`Recaller` reads what it knows about the space (cached briefly), builds a
:class:`~pipelines.recall.state.RecallState` and runs the preset's steps over it
(:mod:`pipelines.recall.runner`); see :mod:`pipelines.recall.presets` for the steps of each
preset and :mod:`pipelines.recall.steps` for what each does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor

from pipelines import spaces
from pipelines.engine import Engine
from pipelines.errors import InvalidInput
from pipelines.fields import is_blank
from pipelines.recall.config import DEFAULT_RECALL_CONFIG, RecallConfig
from pipelines.recall.presets import PRESETS, RecallPreset
from pipelines.recall.query import searchable_text
from pipelines.recall.request import (
    DEFAULT_PRESET,
    MAX_QUERY_CHARS,
    ChunkSpan,
    RecallFilters,
    RecallHit,
    RecallRequest,
    RecallResponse,
)
from pipelines.recall.runner import Clock, run_steps
from pipelines.recall.speakers import learned_names, opening_prefilter, speaker_forms
from pipelines.recall.state import Candidate, RecallState, SpaceProfile
from pipelines.recall.steps.base import QueryEmbedder, StepContext
from pipelines.recall.steps.chunks import explain_chunks, first_chunks
from pipelines.recall.steps.understand import vector_text

__all__ = [
    "RecallFilters",
    "RecallHit",
    "RecallRequest",
    "RecallResponse",
    "Recaller",
    "open_recaller",
]


class Recaller:
    """Read-path service. Thread-safe; caches only each non-empty space's size and speaker
    list, and the size of each stage filter it was given (which chooses between the exact
    scan and the index), each for ``config.space_profile_ttl_s`` seconds.

    ``executor`` runs the round trips sent ahead (the embedding-free signals and the session
    ranking, while the query is embedded); the caller owns it and shuts it down. Without
    one, every round trip runs in the calling thread (same results, more latency).
    ``embedder`` replaces the engine's (the context assembler's memoising one)."""

    def __init__(
        self,
        engine: Engine,
        config: RecallConfig = DEFAULT_RECALL_CONFIG,
        *,
        executor: Executor | None = None,
        embedder: QueryEmbedder | None = None,
    ) -> None:
        self.engine = engine
        self.config = config
        self.executor = executor
        self.embedder: QueryEmbedder = embedder or engine.embedder
        self._profiles: dict[str, SpaceProfile] = {}
        # (space, stage ids) -> (memories in those stages, expiry): the exact-scan choice
        self._scope_sizes: dict[tuple[str, tuple[str, ...]], tuple[int, float]] = {}
        # id(preset) -> (the preset, this Recaller's configuration with its overrides)
        self._configs: dict[int, tuple[RecallPreset, RecallConfig]] = {}
        self._lock = threading.Lock()

    def recall(
        self,
        space: str,
        request: RecallRequest,
        *,
        preset: RecallPreset | None = None,
        with_embeddings: bool = False,
    ) -> RecallResponse:
        """Recall ``request`` in ``space`` with ``preset`` (default: the one the request
        names); NotFound (404) for an unknown space. ``with_embeddings``: each result
        carries its stored embedding.

        Whether the space exists is asked only when the search found nothing (a space with
        matching memories exists): one round trip fewer for every answered recall."""
        if not request.query:  # only control characters: nothing to search for
            spaces.require(self.engine.store, space)
            return RecallResponse([], "semantic", True, "empty_query", True, {"total": 0.0}, 0)
        clock = Clock(request.deadline_ms)
        chosen = preset or PRESETS[request.preset]
        state = RecallState(
            request=request,
            preset=chosen,
            profile=self._profile(space),
            with_embeddings=with_embeddings,
        )
        run_steps(chosen.steps, state, self._context(space, self._config_of(chosen)), clock)
        return self._response(space, state)

    def vector_text(
        self, space: str, query: str, preset: str | RecallPreset = DEFAULT_PRESET
    ) -> str:
        """The text :meth:`recall` embeds for ``query`` with ``preset`` (cleaned; the
        speakers it names stripped when configured), so a caller can embed it ahead of the
        recall and use the vector meanwhile (``""`` for one of control characters only, which
        recall answers with no results). InvalidInput for a query recall would refuse."""
        if len(query) > MAX_QUERY_CHARS or is_blank(query):
            raise InvalidInput(f"query is empty or longer than {MAX_QUERY_CHARS}", field="query")
        cleaned = searchable_text(query)
        if not cleaned:
            return ""
        chosen = PRESETS[preset] if isinstance(preset, str) else preset
        return vector_text(cleaned, self._profile(space), self._config_of(chosen))

    def _config_of(self, preset: RecallPreset) -> RecallConfig:
        """This Recaller's configuration with ``preset``'s overrides, merged once per preset."""
        if not preset.config:
            return self.config
        with self._lock:
            cached = self._configs.get(id(preset))
        if cached is not None and cached[0] is preset:
            return cached[1]
        config = preset.configured(self.config)
        with self._lock:
            if len(self._configs) >= self.config.max_cached_presets:
                self._configs.clear()
            self._configs[id(preset)] = (preset, config)
        return config

    def _context(self, space: str, config: RecallConfig) -> StepContext:
        return StepContext(
            space=space,
            config=config,
            store=self.engine.store,
            embedder=self.embedder,
            reranker=self.engine.models.reranker,
            executor=self.executor,
            stage_scope_size=lambda stages: self._stage_scope_size(space, stages),
            tokens=getattr(self.engine, "token_cache", None),
            access=getattr(self.engine, "access", None),
        )

    def _response(self, space: str, state: RecallState) -> RecallResponse:
        final = state.final_ids()
        explain = state.explaining
        shown = self._chunks_shown(space, [state.pool[i] for i in final])
        results = []
        for item_id in final:
            c = state.pool[item_id]
            notes = state.explanations.get(item_id) if explain else None
            if notes is not None and c.chunk_count:
                notes["chunks"] = explain_chunks(c.chunks, c.chunk_count, c.chunk_signals)
            results.append(
                RecallHit(
                    id=c.id,
                    content=c.text,
                    score=float(state.scores[item_id]),
                    session_id=c.session_id,
                    stage_id=c.stage_id,
                    time=c.event_time,
                    speaker=c.speaker,
                    role=c.role,
                    explain=notes,
                    embedding=state.embeddings.get(item_id) if state.with_embeddings else None,
                    chunk_count=c.chunk_count,
                    chunks=shown.get(item_id, ()),
                )
            )
        decision = state.abstention
        abstain = decision is not None and decision.abstain
        return RecallResponse(
            results=results,
            intent=str(state.plan.intent),
            abstain=abstain,
            abstain_reason=decision.reason if decision is not None and abstain else None,
            complete=state.complete,
            timings_ms=state.timings,
            candidates=len(state.pool),
        )

    def _chunks_shown(
        self, space: str, results: Sequence[Candidate]
    ) -> dict[str, tuple[ChunkSpan, ...]]:
        """The chunks each long memory among ``results`` shows: its matched ones, best first,
        else its first (read only when a long memory came without a chunk match)."""
        shown = {c.id: tuple(m.span for m in c.chunks) for c in results if c.chunks}
        unmatched = [c.id for c in results if c.chunk_count and not c.chunks]
        if unmatched:
            shown.update(first_chunks(self.engine.store, space, unmatched))
        return shown

    # ------------------------------------------------------------------ cached reads

    def _profile(self, space: str) -> SpaceProfile:
        now = time.monotonic()
        with self._lock:
            cached = self._profiles.get(space)
        if cached is not None and cached.expires > now:
            return cached
        row = self.engine.store.read(
            "recall/space_profile", space=space, max_speakers=self.config.max_known_speakers
        )[0]
        speakers = tuple(s for s in row["speakers"] if isinstance(s, str) and s.strip())
        profile = SpaceProfile(
            size=int(row["size"]),
            total=max(1, int(row["total"])),
            speakers=speakers,
            expires=now + self.config.space_profile_ttl_s,
            long_memories=int(row["long_memories"]),
            chunks=int(row["chunks"]),
            total_chunks=int(row["total_chunks"]),
            forms=speaker_forms(
                speakers,
                self._learned_names(space) if speakers else None,
                self.config.speaker_alias_min_chars,
            ),
        )
        if profile.size:  # an empty (or unknown) space is about to change: never cached
            with self._lock:
                self._profiles[space] = profile
        return profile

    def _learned_names(self, space: str) -> dict[str, str]:
        """The names the space's speakers call each other by (:func:`learned_names`)."""
        if not self.config.max_speaker_openings:
            return {}
        rows = self.engine.store.read(
            "recall/speaker_openings",
            space=space,
            opening=opening_prefilter(),
            limit=self.config.max_speaker_openings,
        )
        return learned_names(
            ((r["speakers"], speaker, text) for r in rows for speaker, text in r["openings"]),
            self.config.speaker_name_min_addresses,
            self.config.speaker_name_min_share,
        )

    def _stage_scope_size(self, space: str, stages: Sequence[str]) -> int:
        """Memories in ``stages`` (ids and labels) of ``space``: a choice of plan, not of
        results, so a size a few seconds old is as good."""
        key = (space, tuple(sorted(set(stages))))
        now = time.monotonic()
        with self._lock:
            cached = self._scope_sizes.get(key)
        if cached is not None and cached[1] > now:
            return cached[0]
        rows = self.engine.store.read("recall/stage_scope_size", space=space, stages=list(stages))
        size = int(rows[0]["size"]) if rows else 0
        with self._lock:
            if len(self._scope_sizes) >= self.config.max_cached_stage_scopes:
                self._scope_sizes.clear()
            self._scope_sizes[key] = (size, now + self.config.space_profile_ttl_s)
        return size


def open_recaller(
    engine: Engine,
    config: RecallConfig = DEFAULT_RECALL_CONFIG,
    *,
    threads: int | None = None,
) -> tuple[Recaller, Callable[[], None]]:
    """A Recaller with its own executor (``threads``, default ``config.signal_threads``) for
    the round trips it sends ahead, and the call that shuts that executor down (tests,
    benchmarks, scripts)."""
    workers = config.signal_threads if threads is None else threads
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="recall-signals")
    return Recaller(engine, config, executor=pool), pool.shutdown
