"""Step ``understand`` (pure): the request's :class:`~pipelines.recall.state.Plan`.

The query's intent (its signal-weight profile), keywords, the full-text query, the entity
keys and speakers it names, the time windows it names, and the text its embedding is
computed from."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Literal

from pipelines.graph import as_utc
from pipelines.ingest.entities import canonicalize
from pipelines.language import current
from pipelines.recall.config import (
    SIGNAL_ENTITY,
    SIGNAL_FULLTEXT,
    QueryConfig,
    RecallConfig,
)
from pipelines.recall.intent import Intent, classify_intent
from pipelines.recall.query import (
    build_fulltext_query,
    extract_keywords,
    find_speakers,
    first_person,
    strip_meta,
    strip_speakers,
    task_request,
)
from pipelines.recall.request import RecallRequest
from pipelines.recall.state import Explanations, Plan, RecallState, SpaceProfile
from pipelines.recall.steps.base import RecallStep, StepContext
from pipelines.recall.steps.identifiers import find_identifiers
from pipelines.recall.time_expressions import TimeConstraint, resolve_time_expressions


class Understand(RecallStep):
    """The plan of the request (:func:`plan`), tuned by the ``query`` section: which signals
    are fused, the intent profiles, time expressions, the speakers the query names."""

    kind: Literal["understand"] = "understand"

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        state.plan_ = plan(state.request, state.profile, ctx.config)
        return None


def plan(request: RecallRequest, profile: SpaceProfile, config: RecallConfig) -> Plan:
    """Everything the steps after it read of the request."""
    query, cfg = request.query, config.query
    intent = classify_intent(query).intent
    profile_intent = intent if cfg.intent_profiles else Intent.SEMANTIC
    weights = {
        s: (w if s in cfg.signals else 0.0) for s, w in config.weights_for(profile_intent).items()
    }
    now = as_utc(request.now) or datetime.now(UTC)
    named, query_speakers, content = speakers_in(query, profile, cfg)
    if cfg.strip_meta:
        content = strip_meta(content)
    windows: list[TimeConstraint] = []
    if cfg.time_expressions:
        windows = resolve_time_expressions(query, now, timedelta(days=cfg.recent_window_days))
    fulltext = None
    if weights[SIGNAL_FULLTEXT] > 0.0:
        fulltext = build_fulltext_query(content, cfg.fulltext_max_terms, cfg.fulltext_phrase_boost)
    # Speakers are never entity seeds: a space's speakers are mentioned everywhere
    # (people address each other by name), so they would flood the entity signal.
    keys = entity_keys(query, named, cfg) if weights[SIGNAL_ENTITY] > 0.0 else []
    sel = config.selection
    pool = request.oversample or max(request.k * sel.oversample, sel.min_pool)
    return Plan(
        query=query,
        content=content,
        vector_text=content if cfg.strip_speakers_for_vector else _meta(query, cfg),
        k=request.k,
        pool=max(pool, request.k),
        intent=intent,
        weights=weights,
        keywords=extract_keywords(content, cfg.keyword_min_chars),
        fulltext=fulltext,
        entity_keys=keys,
        query_speakers=query_speakers,
        windows=windows,
        now=now,
        first_person=first_person(query),
        task_like=task_request(query),
        identifiers=tuple(find_identifiers(query, cfg.max_identifiers)),
    )


def _meta(query: str, cfg: QueryConfig) -> str:
    return strip_meta(query) if cfg.strip_meta else query


def speakers_in(
    query: str, profile: SpaceProfile, cfg: QueryConfig
) -> tuple[list[str], list[str], str]:
    """(speakers the query names, those used (``cfg.speakers``), the query without them)."""
    named = find_speakers(query, profile.speakers, profile.forms or None)
    used = named if cfg.speakers else []
    return named, used, (strip_speakers(query, used, profile.forms or None) if used else query)


def vector_text(query: str, profile: SpaceProfile, config: RecallConfig) -> str:
    """The text embedded for ``query`` (already cleaned)."""
    _, _, content = speakers_in(query, profile, config.query)
    if config.query.strip_meta:
        content, query = strip_meta(content), strip_meta(query)
    return content if config.query.strip_speakers_for_vector else query


def entity_keys(query: str, query_speakers: Sequence[str], cfg: QueryConfig) -> list[str]:
    """Canonical keys of the query's word n-grams that are not all stop words; the
    speakers the query names are left out (they are handled by the speaker boost)."""
    words = [w.strip(".,;:!?\"'()[]{}") for w in query.split()]
    words = [w for w in words if w]
    skip = {canonicalize(s) for s in query_speakers}
    keys: list[str] = []
    for n in range(1, cfg.entity_ngram_max + 1):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            if all(w.casefold() in current().queries.stop_words for w in gram):
                continue
            key = canonicalize(" ".join(gram))
            if key and key not in skip:
                keys.append(key)
    return list(dict.fromkeys(keys))[: cfg.entity_max_keys]
