"""The read path: hybrid recall over one memory space.

Stages (each timed in ``timings_ms``; ``deadline_ms`` cuts the optional ones short):

1. **understand** (pure): clean the query, classify its intent (weight profile), extract
   keywords, the entity keys and speakers it names, its time expressions, sub-queries.
2. **embed**: the query (and sub-queries) with the engine's embedding model.
3. **candidates**: ONE Cypher statement (``recall/candidates``) returns the candidates of
   every signal — vector (exact scan for small spaces, else the approximate index,
   over-fetched and post-filtered), full-text (escaped Lucene), entities named in the query
   (MENTIONS) — scoped to the space, filtered by status and the request's filters. With
   ``concurrent_signals`` it runs twice, concurrently: the signals that need no embedding
   are sent before step 2 starts, the vector signals after it (``candidates`` then times
   only the wait after embedding).
4. **fuse** (pure): weighted RRF of the signal rankings, heat and recency ranking the pool,
   then multiplicative boosts for time windows, speakers named in the query, and the
   conversation sessions those speakers took part in (where that separates candidates).
5. **details** / **rerank** (optional): embeddings of the head of the list and of its
   conversation neighbours; the cross-encoder (FlashRank, when loaded) or the no-weights
   context reranker, blended with the fused score.
6. **session_documents** (optional): lift candidates of the sessions BM25 over
   whole-session documents ranks high (``recall/session_ranking``, sent with the
   embedding-free signals; its wait is timed here).
7. **select** (optional): greedy MMR over the oversampled head (by count, never tokens).
8. **abstain** (pure): is the evidence strong enough? Results are returned either way.
9. **touch**: one write raising heat and access counts (never with ``touch=False``).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, get_args

import numpy as np

from pipelines import spaces
from pipelines.engine import Engine
from pipelines.errors import InvalidInput
from pipelines.graph import as_utc, from_epoch_micros
from pipelines.ingest.entities import canonicalize
from pipelines.models.embeddings import Embedder
from pipelines.models.late_interaction import (
    TOKEN_FORMAT,
    late_score,
    unpack,
    unpack_concatenated,
)
from pipelines.recall.abstain import (
    AbstentionDecision,
    AbstentionInputs,
    decide_abstention,
    keyword_coverage,
    top_overlap,
)
from pipelines.recall.config import (
    DEFAULT_RECALL_CONFIG,
    SIGNAL_ENTITY,
    SIGNAL_FULLTEXT,
    SIGNAL_HEAT,
    SIGNAL_RECENCY,
    SIGNAL_VECTOR,
    RecallConfig,
)
from pipelines.recall.fusion import (
    blend_rerank,
    head_blend,
    session_rank_boost,
    temporal_boost,
    weighted_rrf,
)
from pipelines.recall.heat import effective_heat, recency_score, touch
from pipelines.recall.intent import Intent, classify_intent
from pipelines.recall.presets import DEFAULT_PRESET, PRESETS, RecallPreset
from pipelines.recall.query import (
    STOP_WORDS,
    TimeConstraint,
    build_fulltext_query,
    clean_query,
    decompose_query,
    ends_with_question,
    extract_keywords,
    find_speakers,
    resolve_time_expressions,
    scope_fulltext_query,
    strip_speakers,
)
from pipelines.recall.rerank import context_scores
from pipelines.recall.selection import mmr_select

#: Vector ranking restricted to a time window the query names ("in May 2023").
SIGNAL_WINDOW = "window"
_FAR_PAST = datetime(1, 1, 1, tzinfo=UTC)
_FAR_FUTURE = datetime(9999, 12, 31, tzinfo=UTC)

ACTIVE_STATUSES = ("active",)
WITH_SUPERSEDED_STATUSES = ("active", "superseded")
_WORD_SPLIT = str.split


def _statuses(request: RecallRequest) -> list[str]:
    """The memory statuses a request reads: superseded ones only when it asks for them."""
    return list(WITH_SUPERSEDED_STATUSES if request.include_superseded else ACTIVE_STATUSES)


# ----------------------------------------------------------------------------- interface


@dataclass
class RecallFilters:
    """Hard filters, applied inside every signal. ``None`` means no filter. Times are
    inclusive; speakers match case-insensitively; stages match a stage id or label."""

    time_from: datetime | None = None
    time_to: datetime | None = None
    roles: list[str] | None = None
    speakers: list[str] | None = None
    kinds: list[str] | None = None
    stages: list[str] | None = None
    sessions: list[str] | None = None
    tags: list[str] | None = None
    exclude_ids: list[str] | None = None


ResultOrder = Literal["relevance", "time", "auto"]
"""Values of ``RecallRequest.order`` (the API's ``order`` field uses the same type)."""
RESULT_ORDERS: tuple[str, ...] = get_args(ResultOrder)


@dataclass
class RecallRequest:
    query: str
    k: int = 10
    filters: RecallFilters = field(default_factory=RecallFilters)
    include_superseded: bool = False
    explain: bool = False
    deadline_ms: int | None = None
    touch: bool = True
    now: datetime | None = None  # question time, for "last March" etc.
    preset: str = DEFAULT_PRESET  # a name from presets.PRESETS
    oversample: int | None = None  # candidates before selection (default from config)
    # Order of the results: "relevance" (rank order), "time", or "auto": time order for
    # event-order questions (with a preset that has event_order), rank order otherwise.
    # Which k memories are returned never depends on it. Rank order is the default: on
    # LoCoMo, time order cost event-order questions most of their MRR (BENCHMARKS.md,
    # session 10).
    order: ResultOrder = "relevance"
    # Session novelty in selection (None: the config's ``session_novelty``). The context
    # assembler asks for 0: it packs a token budget, where a session's second-best turn is
    # worth its room, and its own phases reach across stages (BENCHMARKS.md, session 16).
    session_novelty: float | None = None


@dataclass
class RecallHit:
    id: str
    content: str
    score: float
    session_id: str | None
    stage_id: str | None
    time: datetime | None
    speaker: str | None
    role: str | None
    explain: dict | None = None  # per-signal ranks/scores, fused, rerank, selection penalty
    embedding: np.ndarray | None = None  # only filled when with_embeddings=True


@dataclass
class RecallResponse:
    results: list[RecallHit]
    intent: str
    abstain: bool
    abstain_reason: str | None
    complete: bool
    timings_ms: dict[str, float]
    candidates: int  # candidate-pool size


# ----------------------------------------------------------------------------- internals


@dataclass
class _Candidate:
    id: str
    text: str
    speaker: str | None
    role: str | None
    kind: str | None
    session_id: str | None
    turn_index: int | None
    stage_id: str | None
    event_time: datetime | None
    ingested_at: datetime | None
    heat: float | None
    last_access: datetime | None
    #: whether its session has a turn by a speaker the query names (None: names none / no session)
    named_speaker_session: bool | None = None
    #: best raw score per ranking name ("vector", "vector:1", "fulltext", "entity", ...)
    raw: dict[str, float] = field(default_factory=dict)


@dataclass
class _Profile:
    size: int
    total: int
    speakers: list[str]
    expires: float


@dataclass
class _Plan:
    """Everything the pure understanding stage derived from the request."""

    query: str
    content: str  # the query without the speakers it names (what the content must match)
    vector_text: str  # what is embedded for the vector signal
    k: int
    pool: int
    preset: RecallPreset
    intent: Intent
    weights: dict[str, float]
    keywords: list[str]
    subqueries: list[str]
    fulltext: str | None
    entity_keys: list[str]
    query_speakers: list[str]
    windows: list[TimeConstraint]
    now: datetime


def _ranked(scored: Sequence[tuple[float, str]]) -> list[str]:
    """Ids by score, best first; ties by id for determinism."""
    return [item_id for _, item_id in sorted(scored, key=lambda p: (-p[0], p[1]))]


def _cosine_from_neo4j(score: float) -> float:
    """Neo4j reports cosine similarity normalised to [0, 1] as (1 + cos) / 2."""
    return 2.0 * score - 1.0


class _Clock:
    def __init__(self, deadline_ms: int | None) -> None:
        self.start = time.perf_counter()
        self.last = self.start
        self.deadline = None if deadline_ms is None else self.start + deadline_ms / 1000.0
        self.timings: dict[str, float] = {}

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = round((now - self.last) * 1000.0, 3)
        self.last = now

    def expired(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def total(self) -> None:
        self.timings["total"] = round((time.perf_counter() - self.start) * 1000.0, 3)


# ----------------------------------------------------------------------------- the service


_MAX_CACHED_SCOPES = 4_096
#: Threads that run the embedding-free half of the candidates query (concurrent_signals);
#: shared by every Recaller. A worker only waits for Neo4j, never for another task.
_SIGNAL_THREADS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="recall-signals")
#: ``recall/candidates`` parameters that switch off the signals that need no embedding
#: (full-text, entities, heat and recency candidates): what is left are the vector signals.
_NO_LEXICAL_SIGNALS: dict[str, Any] = {"fulltext": None, "entity_keys": [], "context_k": 0}


class Recaller:
    """Read-path service. Thread-safe; caches only each non-empty space's size and speaker
    list, and the size of each stage filter it was given (which chooses between the exact
    scan and the index), each for ``config.space_profile_ttl_s`` seconds."""

    def __init__(
        self,
        engine: Engine,
        config: RecallConfig = DEFAULT_RECALL_CONFIG,
        *,
        embedder: Embedder | None = None,
    ) -> None:
        self.engine = engine
        self.config = config
        # The query embedder: the engine's, or one a caller wraps around it (the assembler's
        # memo, so one assembly embeds its query once).
        self.embedder: Embedder = embedder if embedder is not None else engine.embedder
        self._profiles: dict[str, _Profile] = {}
        # (space, stage ids) -> (memories in those stages, expiry): the exact-scan choice
        self._scope_sizes: dict[tuple[str, tuple[str, ...]], tuple[int, float]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ public API

    def recall(
        self,
        space: str,
        request: RecallRequest,
        *,
        with_embeddings: bool = False,
    ) -> RecallResponse:
        """Recall ``request`` in ``space``: NotFound (404) for an unknown space, InvalidInput
        (400, naming the field) for a bad request.

        Whether the space exists is asked only when the search found nothing (a space with
        matching memories exists): one round trip fewer for every answered recall."""
        clock = _Clock(request.deadline_ms)
        query = self._validate(request)
        profile = self._profile(space)
        plan = self._plan(request, query, profile)
        clock.lap("understand")

        lexical = None
        if self.config.concurrent_signals and self._needs_embedding(plan):
            # the signals that need no embedding go to Neo4j now, while the query is embedded
            params = self._candidate_params(space, request, plan, profile, [])
            if any(params[name] for name in _NO_LEXICAL_SIGNALS):
                read = self.engine.store.read
                lexical = _SIGNAL_THREADS.submit(read, "recall/candidates", **params)
        sessions = self._session_ranking(space, request, plan)
        vectors, query_tokens = self._embed(plan)
        clock.lap("embed")

        pool = self._candidates(space, request, plan, vectors, profile, lexical)
        if not pool:
            spaces.require(self.engine.store, space)  # nothing found: is there a space at all?
        clock.lap("candidates")

        ranked, explain, speaker_match = self._fuse(pool, plan, request.explain)
        clock.lap("fuse")

        complete = True
        scores = dict(ranked)
        order = [item_id for item_id, _ in ranked]
        embeddings: dict[str, np.ndarray] = {}
        # late interaction: stored token vectors by id (None: asked, none stored)
        tokens: dict[str, bytes | None] = {}
        selected: list[str] | None = None
        want_embeddings = plan.preset.selection or with_embeddings
        if order and plan.preset.rerank:
            if clock.expired():
                complete = False
            else:
                order, scores = self._rerank(
                    space,
                    plan,
                    order,
                    scores,
                    pool,
                    vectors,
                    explain,
                    embeddings,
                    want_embeddings,
                    tokens if query_tokens is not None else None,
                )
                clock.lap("rerank")
        if order and sessions is not None:
            order, scores = self._session_documents(order, scores, pool, sessions(), explain)
            clock.lap("session_documents")
        if order and query_tokens is not None:
            if clock.expired():
                complete = False
            else:
                order, scores = self._late_interaction(
                    space, order, scores, query_tokens, tokens, explain
                )
                clock.lap("late_interaction")
            if self._session_steps(request, plan) and (
                self.config.session_late_interaction_weight > 0.0
            ):
                if clock.expired():
                    complete = False
                else:
                    order, scores = self._session_late_interaction(
                        space, request, order, scores, pool, query_tokens, explain
                    )
                    clock.lap("session_late_interaction")
        if order and want_embeddings:
            if clock.expired():
                complete = False
            else:
                head = order[: plan.pool if plan.preset.selection else plan.k]
                missing = [i for i in head if i not in embeddings]
                if missing:
                    embeddings.update(self._embeddings(space, missing))
                    clock.lap("embeddings")
                if plan.preset.selection and clock.expired():
                    complete = False
                elif plan.preset.selection:
                    selected = self._select(plan, head, scores, embeddings, explain, pool, request)
                    clock.lap("select")
        final_ids = selected if selected is not None else order[: plan.k]
        if request.order == "time" or (
            request.order == "auto"
            and plan.preset.event_order
            and plan.intent == Intent.EVENT_ORDER
        ):
            final_ids = self._time_order(final_ids, pool)

        decision = self._abstain(plan, pool, final_ids, speaker_match)
        clock.lap("abstain")

        if request.touch and final_ids:
            self._touch(space, final_ids, pool)
            clock.lap("touch")
        clock.total()

        results = [
            self._hit(
                pool[item_id],
                scores[item_id],
                explain.get(item_id) if request.explain else None,
                embeddings.get(item_id) if with_embeddings else None,
            )
            for item_id in final_ids
        ]
        return RecallResponse(
            results=results,
            intent=str(plan.intent),
            abstain=decision.abstain,
            abstain_reason=decision.reason if decision.abstain else None,
            complete=complete,
            timings_ms=clock.timings,
            candidates=len(pool),
        )

    # ------------------------------------------------------------------ validation, plan

    def _validate(self, request: RecallRequest) -> str:
        """Check the request; return the cleaned query."""
        cfg = self.config
        if not isinstance(request.query, str):
            raise InvalidInput("query must be a string", field="query")
        try:
            query = clean_query(request.query, cfg.max_query_chars)
        except ValueError as exc:
            raise InvalidInput(str(exc), field="query") from exc
        if request.preset not in PRESETS:
            raise InvalidInput(
                f"unknown preset {request.preset!r}; known: {sorted(PRESETS)}", field="preset"
            )
        if not isinstance(request.k, int) or not cfg.min_k <= request.k <= cfg.max_k:
            raise InvalidInput(f"k must be between {cfg.min_k} and {cfg.max_k}", field="k")
        if request.oversample is not None and request.oversample < request.k:
            raise InvalidInput("oversample must be at least k", field="oversample")
        if request.deadline_ms is not None and request.deadline_ms <= 0:
            raise InvalidInput("deadline_ms must be positive", field="deadline_ms")
        if request.session_novelty is not None and not 0.0 <= request.session_novelty <= 1.0:
            raise InvalidInput("session_novelty must be between 0 and 1", field="session_novelty")
        if request.order not in RESULT_ORDERS:
            raise InvalidInput(
                f"unknown order {request.order!r}; known: {list(RESULT_ORDERS)}", field="order"
            )
        f = request.filters
        t_from, t_to = as_utc(f.time_from), as_utc(f.time_to)
        if t_from is not None and t_to is not None and t_from > t_to:
            raise InvalidInput("time_from is after time_to", field="filters.time_from")
        return query

    def vector_text(self, space: str, query: str, preset: str = DEFAULT_PRESET) -> str:
        """The text :meth:`recall` embeds first for ``query`` with ``preset`` (cleaned; the
        speakers it names stripped when configured), so a caller can embed it ahead of the
        recall and use the vector meanwhile. InvalidInput for a query recall would refuse."""
        try:
            cleaned = clean_query(query, self.config.max_query_chars)
        except ValueError as exc:
            raise InvalidInput(str(exc), field="query") from exc
        _, _, content = self._speakers(cleaned, self._profile(space), PRESETS[preset])
        return content if self.config.strip_speakers_for_vector else cleaned

    @staticmethod
    def _speakers(
        query: str, profile: _Profile, preset: RecallPreset
    ) -> tuple[list[str], list[str], str]:
        """(speakers the query names, those the preset uses, the query without the latter)."""
        named = find_speakers(query, profile.speakers)
        used = named if preset.speakers else []
        return named, used, (strip_speakers(query, used) if used else query)

    def _plan(self, request: RecallRequest, query: str, profile: _Profile) -> _Plan:
        cfg = self.config
        preset = PRESETS[request.preset]
        intent = classify_intent(query).intent
        profile_intent = intent if preset.intent_profiles else Intent.SEMANTIC
        weights = {
            s: (w if s in preset.signals else 0.0)
            for s, w in cfg.weights_for(profile_intent).items()
        }
        now = as_utc(request.now) or datetime.now(UTC)
        named, query_speakers, content = self._speakers(query, profile, preset)
        subqueries: list[str] = []
        if preset.decompose and weights[SIGNAL_VECTOR] > 0.0:
            subqueries = [
                strip_speakers(sub, query_speakers) if cfg.strip_speakers_for_vector else sub
                for sub in decompose_query(query, cfg.max_subqueries)[1:]
            ]
            subqueries = [s for s in dict.fromkeys(subqueries) if s not in (content, query)]
        windows: list[TimeConstraint] = []
        if preset.time_expressions:
            windows = resolve_time_expressions(query, now, timedelta(days=cfg.recent_window_days))
        fulltext = None
        if weights[SIGNAL_FULLTEXT] > 0.0:
            fulltext = build_fulltext_query(
                content, cfg.fulltext_max_terms, cfg.fulltext_phrase_boost
            )
        entity_keys = (
            # Speakers are never entity seeds: a space's speakers are mentioned everywhere
            # (people address each other by name), so they would flood the entity signal.
            self._entity_keys(query, named) if weights[SIGNAL_ENTITY] > 0.0 else []
        )
        pool = request.oversample or max(request.k * cfg.mmr_oversample, cfg.mmr_min_pool)
        return _Plan(
            query=query,
            content=content,
            vector_text=content if cfg.strip_speakers_for_vector else query,
            k=request.k,
            pool=max(pool, request.k),
            preset=preset,
            intent=intent,
            weights=weights,
            keywords=extract_keywords(content),
            subqueries=subqueries,
            fulltext=fulltext,
            entity_keys=entity_keys,
            query_speakers=query_speakers,
            windows=windows,
            now=now,
        )

    def _entity_keys(self, query: str, query_speakers: Sequence[str]) -> list[str]:
        """Canonical keys of the query's word n-grams that are not all stop words; the
        speakers the query names are left out (they are handled by the speaker boost)."""
        words = [w.strip(".,;:!?\"'()[]{}") for w in _WORD_SPLIT(query)]
        words = [w for w in words if w]
        skip = {canonicalize(s) for s in query_speakers}
        keys: list[str] = []
        for n in range(1, self.config.entity_ngram_max + 1):
            for i in range(len(words) - n + 1):
                gram = words[i : i + n]
                if all(w.casefold() in STOP_WORDS for w in gram):
                    continue
                key = canonicalize(" ".join(gram))
                if key and key not in skip:
                    keys.append(key)
        return list(dict.fromkeys(keys))[: self.config.entity_max_keys]

    # ------------------------------------------------------------------ I/O stages

    def _profile(self, space: str) -> _Profile:
        now = time.monotonic()
        with self._lock:
            cached = self._profiles.get(space)
        if cached is not None and cached.expires > now:
            return cached
        row = self.engine.store.read(
            "recall/space_profile", space=space, max_speakers=self.config.max_known_speakers
        )[0]
        profile = _Profile(
            size=int(row["size"]),
            total=max(1, int(row["total"])),
            speakers=[s for s in row["speakers"] if isinstance(s, str) and s.strip()],
            expires=now + self.config.space_profile_ttl_s,
        )
        if profile.size:  # an empty (or unknown) space is about to change: never cached
            with self._lock:
                self._profiles[space] = profile
        return profile

    @staticmethod
    def _needs_embedding(plan: _Plan) -> bool:
        return (
            plan.weights[SIGNAL_VECTOR] > 0.0 or plan.preset.rerank or plan.preset.late_interaction
        )

    def _embed(self, plan: _Plan) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The query's embeddings (vector text, then sub-queries) and, for late
        interaction, the vector text's token vectors from the same forward pass (None when
        the preset does not ask for them or the embedder cannot give them)."""
        if not self._needs_embedding(plan):
            return None, None
        texts = [plan.vector_text, *plan.subqueries]
        with_tokens = getattr(self.embedder, "encode_with_tokens", None)
        if not plan.preset.late_interaction or with_tokens is None:
            return self.embedder.encode(texts), None
        vectors, tokens = with_tokens(texts)
        return vectors, tokens[0]

    def _filter_params(self, request: RecallRequest) -> dict[str, Any]:
        f = request.filters
        stages = None
        if f.stages is not None:
            stages = list(
                dict.fromkeys(
                    v for s in f.stages for v in (s, "label:" + " ".join(s.split()).casefold())
                )
            )
        return {
            "statuses": _statuses(request),
            "time_from": as_utc(f.time_from),
            "time_to": as_utc(f.time_to),
            "roles": f.roles,
            "speakers": [s.casefold() for s in f.speakers] if f.speakers is not None else None,
            "kinds": f.kinds,
            "stages": stages,
            "sessions": f.sessions,
            "tags": f.tags,
            "exclude_ids": list(f.exclude_ids or []),
        }

    def _candidates(
        self,
        space: str,
        request: RecallRequest,
        plan: _Plan,
        vectors: np.ndarray | None,
        profile: _Profile,
        lexical: Future[list[dict[str, Any]]] | None = None,
    ) -> dict[str, _Candidate]:
        """Every signal's candidates. ``lexical``: the embedding-free signals, already sent
        (``concurrent_signals``); then only the vector signals are asked for here."""
        cfg = self.config
        use_vector = vectors is not None and plan.weights[SIGNAL_VECTOR] > 0.0
        embeddings = [v.tolist() for v in vectors] if use_vector and vectors is not None else []
        params = self._candidate_params(space, request, plan, profile, embeddings)
        if lexical is None:
            pool = self._parse_candidates(self.engine.store.read("recall/candidates", **params))
        else:
            params.update(_NO_LEXICAL_SIGNALS)
            pool = (
                self._parse_candidates(self.engine.store.read("recall/candidates", **params))
                if embeddings
                else {}
            )
            self._merge(pool, self._parse_candidates(lexical.result()))
        # Adaptive over-fetch: the approximate index is searched globally and post-filtered;
        # when the space's share came back short, ask again (vector only) with a larger k.
        vector_k = params["vector_k"]
        selectivity = profile.size / profile.total
        attempt = 0
        while embeddings and not params["exact"] and params["exact_stages"] is None:
            got = sum(1 for c in pool.values() if SIGNAL_VECTOR in c.raw)
            fetch = params["vector_fetch"]
            if got >= min(vector_k, profile.size) or fetch >= cfg.vector_overfetch_max:
                break
            attempt += 1
            larger = cfg.vector_fetch_size(
                vector_k, space_size=profile.size, filter_selectivity=selectivity, attempt=attempt
            )
            if larger <= fetch:  # an over-fetch factor of 1 never grows: stop, do not spin
                break
            params.update(_NO_LEXICAL_SIGNALS, windows=[], vector_fetch=larger)
            self._merge(
                pool,
                self._parse_candidates(self.engine.store.read("recall/candidates", **params)),
            )
        return pool

    @staticmethod
    def _merge(pool: dict[str, _Candidate], more: dict[str, _Candidate]) -> None:
        """Add ``more``'s candidates to ``pool``; a memory in both keeps every signal."""
        for item_id, cand in more.items():
            if item_id in pool:
                pool[item_id].raw.update(cand.raw)
            else:
                pool[item_id] = cand

    def _candidate_params(
        self,
        space: str,
        request: RecallRequest,
        plan: _Plan,
        profile: _Profile,
        embeddings: list[list[float]],
    ) -> dict[str, Any]:
        """Parameters of ``recall/candidates``; no ``embeddings``: no vector signals."""
        cfg = self.config
        per = cfg.candidates_per_signal
        selectivity = profile.size / profile.total
        use_vector = bool(embeddings)
        filters = self._filter_params(request)
        exact = cfg.use_exact_scan(profile.size)
        exact_stages = None
        if use_vector and not exact and filters["stages"] is not None:
            exact_stages = self._exact_stage_scope(space, filters["stages"])
        vector_k = per[SIGNAL_VECTOR]
        context_k = 0
        if cfg.context_signals_add_candidates and (
            plan.weights[SIGNAL_HEAT] > 0.0 or plan.weights[SIGNAL_RECENCY] > 0.0
        ):
            context_k = max(per[SIGNAL_HEAT], per[SIGNAL_RECENCY])
        fulltext_k = per[SIGNAL_FULLTEXT]
        params = {
            "space": space,
            **filters,
            "embeddings": embeddings,
            "exact": exact,
            "exact_stages": exact_stages,
            "vector_k": vector_k,
            "vector_fetch": cfg.vector_fetch_size(
                vector_k, space_size=profile.size, filter_selectivity=selectivity
            ),
            "fulltext": (
                scope_fulltext_query(plan.fulltext, spaces.fulltext_tag(space))
                if plan.fulltext
                else None
            ),
            "fulltext_k": fulltext_k,
            "fulltext_fetch": min(
                cfg.fulltext_overfetch_max,
                max(
                    fulltext_k,
                    math.ceil(
                        fulltext_k
                        * cfg.vector_overfetch_factor
                        / max(cfg.min_filter_selectivity, selectivity)
                    ),
                ),
            ),
            "entity_keys": plan.entity_keys,
            "entity_k": per[SIGNAL_ENTITY],
            "windows": self._window_params(plan) if embeddings else [],
            "window_k": per[SIGNAL_VECTOR],
            "context_k": context_k,
            "query_speakers": [s.casefold() for s in plan.query_speakers],
        }
        return params

    def _exact_stage_scope(self, space: str, stages: list[str]) -> list[str] | None:
        """The stage filter's ids when its stages are small enough to scan exactly (through
        the (space, stage_id) index), else None (the global index, post-filtered)."""
        key = (space, tuple(sorted(set(stages))))
        now = time.monotonic()
        with self._lock:
            cached = self._scope_sizes.get(key)
        if cached is not None and cached[1] > now:
            size = cached[0]
        else:  # a choice of plan, not of results: a size a few seconds old is as good
            rows = self.engine.store.read("recall/stage_scope_size", space=space, stages=stages)
            size = int(rows[0]["size"]) if rows else 0
            with self._lock:
                if len(self._scope_sizes) >= _MAX_CACHED_SCOPES:
                    self._scope_sizes.clear()
                self._scope_sizes[key] = (size, now + self.config.space_profile_ttl_s)
        return stages if self.config.use_exact_scan(size) else None

    def _window_params(self, plan: _Plan) -> list[dict[str, datetime]]:
        """Closed bounds for each time window of the query (open ends become far dates, so
        the statement can always use the (space, event_time) range index)."""
        out = []
        for w in plan.windows[: self.config.max_time_windows]:
            if w.soft and not self.config.soft_windows_add_candidates:
                continue
            out.append(
                {
                    "start": as_utc(w.start) or _FAR_PAST,
                    "end": as_utc(w.end) or _FAR_FUTURE,
                }
            )
        return out

    @staticmethod
    def _parse_candidates(rows: list[dict[str, Any]]) -> dict[str, _Candidate]:
        pool: dict[str, _Candidate] = {}
        for r in rows:
            cand = _Candidate(
                id=r["id"],
                text=r["text"] or "",
                speaker=r["speaker"],
                role=r["role"],
                kind=r["kind"],
                session_id=r["session_id"],
                turn_index=r["turn_index"],
                stage_id=r["stage_id"],
                event_time=from_epoch_micros(r["event_time_us"]),
                ingested_at=from_epoch_micros(r["ingested_at_us"]),
                heat=r["heat"],
                last_access=from_epoch_micros(r["last_access_us"]),
                named_speaker_session=r["named_speaker_session"],
            )
            for hit in r["hits"]:
                signal, qi, score = hit["signal"], int(hit["qi"] or 0), float(hit["score"])
                if signal == SIGNAL_WINDOW:
                    name = f"{SIGNAL_WINDOW}:{qi}"
                else:
                    name = f"{signal}:{qi}" if signal == SIGNAL_VECTOR and qi > 0 else signal
                if name not in cand.raw or score > cand.raw[name]:
                    cand.raw[name] = score
            pool[cand.id] = cand
        return pool

    def _embeddings(self, space: str, ids: list[str]) -> dict[str, np.ndarray]:
        rows = self.engine.store.read("recall/embeddings", space=space, ids=ids)
        return {
            r["id"]: np.asarray(r["embedding"], dtype=np.float32)
            for r in rows
            if r["embedding"] is not None
        }

    def _touch(self, space: str, ids: list[str], pool: dict[str, _Candidate]) -> None:
        cfg = self.config
        now = datetime.now(UTC)
        rows = []
        for item_id in ids:
            c = pool[item_id]
            since = c.last_access or c.ingested_at or now
            rows.append(
                {
                    "id": item_id,
                    "heat": touch(
                        c.heat if c.heat is not None else 0.0,
                        since,
                        now,
                        decay_rate=cfg.heat_decay_rate_per_day,
                        floor=cfg.heat_floor,
                        boost=cfg.heat_access_boost,
                    ),
                }
            )
        self.engine.store.write("recall/touch", space=space, rows=rows, now=now)

    # ------------------------------------------------------------------ pure stages

    def _rankings(self, pool: dict[str, _Candidate], plan: _Plan) -> dict[str, list[str]]:
        """Per-signal rankings (best first; ties by id for determinism)."""
        cfg = self.config
        by_name: dict[str, list[tuple[float, str]]] = {}
        for c in pool.values():
            for name, score in c.raw.items():
                if name in (SIGNAL_HEAT, SIGNAL_RECENCY):
                    continue  # recomputed below from the stored values
                by_name.setdefault(name, []).append((score, c.id))
        rankings = {name: _ranked(items) for name, items in by_name.items()}
        # Heat and recency rank the pool (content candidates, plus their own ones when
        # configured); a signal that hardly varies over the pool says nothing and is dropped.
        own = (SIGNAL_HEAT, SIGNAL_RECENCY)
        content = [c for c in pool.values() if any(n not in own for n in c.raw)]
        members = list(pool.values()) if cfg.context_signals_add_candidates else content
        context: dict[str, list[tuple[float, str]]] = {SIGNAL_HEAT: [], SIGNAL_RECENCY: []}
        half_life = timedelta(days=cfg.recency_half_life_days)
        for c in members:
            if plan.weights[SIGNAL_HEAT] > 0.0 and c.heat is not None:
                since = c.last_access or c.ingested_at
                heat = (
                    effective_heat(
                        c.heat, since, plan.now, cfg.heat_decay_rate_per_day, cfg.heat_floor
                    )
                    if since is not None
                    else c.heat
                )
                context[SIGNAL_HEAT].append((heat, c.id))
            if plan.weights[SIGNAL_RECENCY] > 0.0 and c.event_time is not None:
                recency = recency_score(c.event_time, plan.now, half_life)
                context[SIGNAL_RECENCY].append((recency, c.id))
        for name, items in context.items():
            if len(items) < 2:
                continue
            values = [v for v, _ in items]
            if max(values) - min(values) < cfg.min_signal_spread:
                continue
            rankings[name] = [i for _, i in sorted(items, key=lambda p: (-p[0], p[1]))]
        return rankings

    def _fuse(
        self, pool: dict[str, _Candidate], plan: _Plan, explain: bool
    ) -> tuple[list[tuple[str, float]], dict[str, dict[str, Any]], float | None]:
        """Fused ranking, explain details, and the share of the best content matches (before
        the speaker boost) said by a speaker the query names (``None``: it names none)."""
        cfg = self.config
        rankings = self._rankings(pool, plan)
        weights = dict(plan.weights)
        for name in rankings:
            if name.startswith(SIGNAL_VECTOR + ":"):
                weights[name] = plan.weights[SIGNAL_VECTOR] * cfg.subquery_weight
            elif name.startswith(SIGNAL_WINDOW + ":"):
                weights[name] = plan.weights[SIGNAL_VECTOR] * cfg.time_window_weight
        fused = weighted_rrf(rankings, weights, cfg.rrf_k)
        ranked = [(f.id, f.score) for f in fused]
        boosts: dict[str, dict[str, float]] = {}

        def boost(ids: set[str], factor: float, name: str) -> None:
            """Multiply the scores of ``ids`` by ``factor`` and say so in ``explain``."""
            nonlocal ranked
            ranked = temporal_boost(ranked, ids, factor)
            for item_id in ids:
                boosts.setdefault(item_id, {})[name] = factor

        if plan.windows:
            in_window = {
                c.id
                for c in pool.values()
                if c.event_time is not None and any(w.contains(c.event_time) for w in plan.windows)
            }
            if in_window:
                boost(in_window, cfg.temporal_boost_factor, "time")
        speaker_match = None
        if plan.query_speakers:
            named = {s.casefold() for s in plan.query_speakers}
            spoken = {c.id for c in pool.values() if (c.speaker or "").casefold() in named}
            top = ranked[: cfg.abstention.speaker_top_n]
            if top:
                speaker_match = sum(1 for i, _ in top if i in spoken) / len(top)
            if spoken:
                boost(spoken, cfg.speaker_boost_factor, "speaker")
            # Their conversations: a boost only where it separates (in a space whose every
            # session includes the named speaker it would lift everything alike).
            with_speaker = {c.id for c in pool.values() if c.named_speaker_session}
            factor = cfg.speaker_session_boost_factor
            if with_speaker and len(with_speaker) < len(pool) and factor != 1.0:
                boost(with_speaker, factor, "speaker_session")
        if plan.preset.question_prior and cfg.question_turn_factor != 1.0:
            asking = {
                c.id for c in pool.values() if c.kind == "turn" and ends_with_question(c.text)
            }
            if asking:
                boost(asking, cfg.question_turn_factor, "question")
        details: dict[str, dict[str, Any]] = {}
        if explain:
            for f in fused:
                c = pool[f.id]
                details[f.id] = {
                    "signals": {
                        name: {
                            "rank": rank,
                            "score": self._explain_score(name, c),
                            "weight": weights.get(name, 0.0),
                            "contribution": f.contributions.get(name, 0.0),
                        }
                        for name, rank in f.ranks.items()
                    },
                    "fused": f.score,
                    "boosts": boosts.get(f.id, {}),
                }
        return ranked, details, speaker_match

    def _explain_score(self, name: str, c: _Candidate) -> float | None:
        if name == SIGNAL_VECTOR or name.startswith((SIGNAL_VECTOR + ":", SIGNAL_WINDOW + ":")):
            return _cosine_from_neo4j(c.raw[name])
        if name == SIGNAL_HEAT:
            return c.heat
        if name == SIGNAL_RECENCY:
            return None if c.event_time is None else c.event_time.timestamp()
        return c.raw.get(name)

    def _rerank(
        self,
        space: str,
        plan: _Plan,
        order: list[str],
        scores: dict[str, float],
        pool: dict[str, _Candidate],
        vectors: np.ndarray | None,
        explain: dict[str, dict[str, Any]],
        embeddings: dict[str, np.ndarray],
        fetch_embeddings: bool,
        tokens: dict[str, bytes | None] | None,
    ) -> tuple[list[str], dict[str, float]]:
        """Rerank the head of the list: the cross-encoder when loaded, else the context
        reranker (a turn with its neighbours), blended with the fused score. The context
        reranker's round trip also fills ``embeddings`` for the head when selection follows,
        and ``tokens`` (when given) with the head's late-interaction token vectors."""
        cfg = self.config
        window = order[: cfg.rerank_window]
        reranker = self.engine.models.reranker
        if reranker is not None:
            raw = reranker.score(plan.content, [pool[i].text for i in window])
            rerank_scores = dict(zip(window, raw, strict=True))
            weight, method = cfg.rerank_weight, "cross_encoder"
        elif cfg.fallback_reranker == "context" and vectors is not None:
            rows = self.engine.store.read(
                "recall/context",
                space=space,
                ids=window,
                embedding=vectors[0].tolist(),
                window=cfg.context_window,
                with_embeddings=fetch_embeddings,
                token_format=TOKEN_FORMAT if tokens is not None else None,
            )
            for r in rows:
                if r["embedding"] is not None:
                    embeddings[r["id"]] = np.asarray(r["embedding"], dtype=np.float32)
                if tokens is not None:
                    tokens[r["id"]] = r["tokens"]
            rerank_scores = context_scores(
                {r["id"]: _cosine_from_neo4j(r["score"]) for r in rows},
                {
                    r["id"]: [
                        (int(n["distance"]), _cosine_from_neo4j(n["score"]))
                        for n in r["neighbours"]
                        if n is not None
                    ]
                    for r in rows
                },
                cfg.context_weight,
                cfg.context_window,
            )
            weight, method = cfg.context_rerank_weight, "context"
        else:
            return order, scores
        blended = blend_rerank([(i, scores[i]) for i in order], rerank_scores, weight)
        for b in blended:
            if b.id in explain:
                explain[b.id]["rerank"] = {
                    "method": method,
                    "score": rerank_scores.get(b.id),
                    "normalised": b.rerank_norm,
                    "blended": b.score,
                }
        return [b.id for b in blended], {b.id: b.score for b in blended}

    def _session_ranking(
        self, space: str, request: RecallRequest, plan: _Plan
    ) -> Callable[[], list[str]] | None:
        """The session-level search (``session_documents``): a call that returns the session
        ids ranked by BM25 over their documents. With ``concurrent_signals`` the query is sent
        now on a second connection and the call waits for it; otherwise the call runs it.
        None when the preset, the weight, the query (no full-text
        terms) or a ``time_to`` filter rules it out: a session's document holds every text
        of the session, and a recall bounded in time must not be steered by later ones. A
        recall restricted to stages or to one session skips it too: a stage is usually one
        session (or a few), so the lift would be the same for (nearly) every candidate, and
        the round trip is not free (the assembler's Phase 1 recalls one stage)."""
        cfg = self.config
        if (
            not self._session_steps(request, plan)
            or cfg.session_document_weight <= 0.0
            or not plan.fulltext
        ):
            return None
        params = {
            "space": space,
            "fulltext": scope_fulltext_query(plan.fulltext, spaces.fulltext_tag(space), "texts"),
            "session_k": cfg.session_document_k,
        }

        def read() -> list[str]:
            rows = self.engine.store.read("recall/session_ranking", **params)
            return [r["session_id"] for r in rows]

        return _SIGNAL_THREADS.submit(read).result if cfg.concurrent_signals else read

    @staticmethod
    def _session_steps(request: RecallRequest, plan: _Plan) -> bool:
        """Whether the session-level steps (session documents, session late interaction,
        session novelty in selection) apply: the preset has ``session_documents`` and no
        ``time_to``, stage or one-session filter rules them out (see
        :meth:`_session_ranking`)."""
        f = request.filters
        return (
            plan.preset.session_documents
            and f.time_to is None
            and f.stages is None
            and (f.sessions is None or len(set(f.sessions)) > 1)
        )

    def _session_late_interaction(
        self,
        space: str,
        request: RecallRequest,
        order: list[str],
        scores: dict[str, float],
        pool: dict[str, _Candidate],
        query_tokens: np.ndarray,
        explain: dict[str, dict[str, Any]],
    ) -> tuple[list[str], dict[str, float]]:
        """Lift candidates by the rank of their session under session-level MaxSim (the
        query's token vectors against every token vector of the session's memories). Only
        the sessions of the first ``session_late_interaction_window`` candidates are
        scored, in one round trip."""
        cfg = self.config
        window = order[: cfg.session_late_interaction_window]
        sessions = list(dict.fromkeys(s for i in window if (s := pool[i].session_id)))
        if len(sessions) < 2:
            return order, scores
        rows = self.engine.store.read(
            "recall/session_token_vectors",
            space=space,
            sessions=sessions,
            token_format=TOKEN_FORMAT,
            statuses=_statuses(request),
        )
        session_scores = {
            r["session_id"]: late_score(
                query_tokens,
                unpack_concatenated(r["tokens"]),
                cfg.session_late_interaction_length_penalty,
            )
            for r in rows
            if r["tokens"]
        }
        if len(session_scores) < 2:
            return order, scores
        ranking = sorted(session_scores, key=lambda s: (-session_scores[s], s))
        return self._session_lift(
            order,
            scores,
            pool,
            ranking,
            cfg.session_late_interaction_weight,
            0,
            explain,
            "session_late_interaction",
            session_scores,
        )

    def _session_documents(
        self,
        order: list[str],
        scores: dict[str, float],
        pool: dict[str, _Candidate],
        ranking: list[str],
        explain: dict[str, dict[str, Any]],
    ) -> tuple[list[str], dict[str, float]]:
        cfg = self.config
        return self._session_lift(
            order,
            scores,
            pool,
            ranking,
            cfg.session_document_weight,
            cfg.session_document_rrf_k,
            explain,
            "session_document",
        )

    @staticmethod
    def _session_lift(
        order: list[str],
        scores: dict[str, float],
        pool: dict[str, _Candidate],
        ranking: list[str],
        weight: float,
        rrf_k: int,
        explain: dict[str, dict[str, Any]],
        step: str,
        session_scores: dict[str, float] | None = None,
    ) -> tuple[list[str], dict[str, float]]:
        """Lift candidates by the rank of their session in ``ranking``
        (:func:`~pipelines.recall.fusion.session_rank_boost`) and explain it under ``step``
        (with the session's own score when the ranking came from scores)."""
        rank = {session_id: r for r, session_id in enumerate(ranking)}
        boosted = session_rank_boost(
            [(i, scores[i]) for i in order],
            {i: pool[i].session_id for i in order},
            rank,
            weight,
            rrf_k,
        )
        for item_id, score in boosted:
            if item_id in explain:
                session_id = pool[item_id].session_id
                entry: dict[str, Any] = {"session": session_id, "rank": rank.get(session_id or "")}
                if session_scores is not None:
                    entry["score"] = session_scores.get(session_id or "")
                explain[item_id][step] = entry | {"before": scores[item_id], "after": score}
        return [i for i, _ in boosted], dict(boosted)

    def _late_interaction(
        self,
        space: str,
        order: list[str],
        scores: dict[str, float],
        query_tokens: np.ndarray,
        tokens: dict[str, bytes | None],
        explain: dict[str, dict[str, Any]],
    ) -> tuple[list[str], dict[str, float]]:
        """Rescore the head of the list by MaxSim of the query's token vectors against each
        memory's stored ones (:func:`~pipelines.recall.fusion.head_blend`). Token vectors the
        rerank's round trip did not bring are read here; memories without any (stored
        before token vectors, or in another format: the ``token_vectors`` job fills them
        in) get no late-interaction score."""
        cfg = self.config
        window = order[: cfg.late_interaction_window]
        missing = [i for i in window if i not in tokens]
        if missing:
            rows = self.engine.store.read(
                "recall/token_vectors", space=space, ids=missing, token_format=TOKEN_FORMAT
            )
            tokens.update(dict.fromkeys(missing))
            tokens.update({r["id"]: r["tokens"] for r in rows})
        late = {}
        for item_id in window:
            blob = tokens.get(item_id)
            if blob:
                late[item_id] = late_score(
                    query_tokens, unpack(blob), cfg.late_interaction_length_penalty
                )
        if len(late) < 2:
            return order, scores
        blended = head_blend(
            [(i, scores[i]) for i in order],
            late,
            cfg.late_interaction_weight,
            cfg.late_interaction_window,
        )
        for b in blended:
            if b.id in explain and b.reranked:
                explain[b.id]["late_interaction"] = {
                    "score": late[b.id],
                    "normalised": b.rerank_norm,
                    "before": scores[b.id],
                    "after": b.score,
                }
        return [b.id for b in blended], {b.id: b.score for b in blended}

    def _select(
        self,
        plan: _Plan,
        order: list[str],
        scores: dict[str, float],
        embeddings: dict[str, np.ndarray],
        explain: dict[str, dict[str, Any]],
        pool: dict[str, _Candidate],
        request: RecallRequest,
    ) -> list[str]:
        """MMR selection; with the session steps on, with session novelty
        (``session_novelty``) over the candidates' conversation sessions."""
        head = order
        dims = self.embedder.dimensions
        matrix = np.zeros((len(head), dims), dtype=np.float64)
        for row, item_id in enumerate(head):
            emb = embeddings.get(item_id)
            if emb is not None and emb.shape == (dims,):
                matrix[row] = emb
        novelty = (
            self.config.session_novelty
            if request.session_novelty is None
            else request.session_novelty
        )
        if not self._session_steps(request, plan):
            novelty = 0.0
        picks = mmr_select(
            head,
            [scores[i] for i in head],
            matrix,
            plan.k,
            self.config.mmr_lambda,
            groups=[pool[i].session_id for i in head] if novelty > 0.0 else None,
            group_penalty=novelty,
        )
        for p in picks:
            if p.id in explain:
                explain[p.id]["selection"] = {
                    "relevance": p.relevance,
                    "penalty": p.penalty,
                    "session_penalty": p.group_penalty,
                    "gain": p.gain,
                    "rank": p.rank,
                }
        return [p.id for p in picks]

    @staticmethod
    def _time_order(ids: list[str], pool: dict[str, _Candidate]) -> list[str]:
        far_past = datetime.min.replace(tzinfo=UTC)
        return sorted(
            ids,
            key=lambda i: (
                pool[i].event_time or far_past,
                pool[i].session_id or "",
                pool[i].turn_index if pool[i].turn_index is not None else -1,
            ),
        )

    def _abstain(
        self,
        plan: _Plan,
        pool: dict[str, _Candidate],
        final_ids: list[str],
        speaker_match: float | None,
    ) -> AbstentionDecision:
        vector_hits = [c.raw[SIGNAL_VECTOR] for c in pool.values() if SIGNAL_VECTOR in c.raw]
        fulltext_hits = [c.raw[SIGNAL_FULLTEXT] for c in pool.values() if SIGNAL_FULLTEXT in c.raw]

        def ranking(signal: str) -> list[str]:
            return _ranked([(c.raw[signal], c.id) for c in pool.values() if signal in c.raw])

        inputs = AbstentionInputs(
            top_vector_similarity=_cosine_from_neo4j(max(vector_hits)) if vector_hits else None,
            top_fulltext_score=(
                max(fulltext_hits) if fulltext_hits else (0.0 if plan.fulltext else None)
            ),
            keyword_coverage=keyword_coverage(plan.keywords, (pool[i].text for i in final_ids)),
            candidate_count=len(pool),
            signal_agreement=top_overlap(
                ranking(SIGNAL_VECTOR),
                ranking(SIGNAL_FULLTEXT),
                self.config.abstention.agreement_top_n,
            ),
            speaker_match=speaker_match,
        )
        return decide_abstention(inputs, self.config.abstention)

    @staticmethod
    def _hit(
        c: _Candidate, score: float, explain: dict[str, Any] | None, embedding: np.ndarray | None
    ) -> RecallHit:
        return RecallHit(
            id=c.id,
            content=c.text,
            score=float(score),
            session_id=c.session_id,
            stage_id=c.stage_id,
            time=c.event_time,
            speaker=c.speaker,
            role=c.role,
            explain=explain,
            embedding=embedding,
        )
