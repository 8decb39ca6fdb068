"""The ``recall/candidates`` statement's parameters and rows (pure).

One statement returns the candidates of every signal: vector (an exact scan of small spaces
or of a small stage filter, else the approximate index, over-fetched and post-filtered),
full-text (escaped Lucene scoped to the space), entities the query names (MENTIONS), a
vector ranking inside each time window the query names, and optionally the space's hottest
and most recent memories. Filters apply inside every signal."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from pipelines import spaces
from pipelines.graph import as_utc, from_epoch_micros
from pipelines.recall.config import (
    SIGNAL_ENTITY,
    SIGNAL_FULLTEXT,
    SIGNAL_HEAT,
    SIGNAL_RECENCY,
    SIGNAL_VECTOR,
    RecallConfig,
)
from pipelines.recall.query import scope_fulltext_query
from pipelines.recall.request import RecallRequest
from pipelines.recall.state import SIGNAL_WINDOW, Candidate, Plan, Row, SpaceProfile, statuses

_FAR_PAST = datetime(1, 1, 1, tzinfo=UTC)
_FAR_FUTURE = datetime(9999, 12, 31, tzinfo=UTC)
#: Parameters that switch off the signals that need no embedding (full-text, entities, heat
#: and recency candidates): what is left are the vector signals.
NO_LEXICAL_SIGNALS: dict[str, Any] = {"fulltext": None, "entity_keys": [], "context_k": 0}


def filter_params(request: RecallRequest) -> dict[str, Any]:
    """The request's filters as statement parameters (a stage matches by id or label)."""
    f = request.filters
    stages = None
    if f.stages is not None:
        stages = list(
            dict.fromkeys(
                v for s in f.stages for v in (s, "label:" + " ".join(s.split()).casefold())
            )
        )

    def listed(values: tuple[str, ...] | None) -> list[str] | None:
        return None if values is None else list(values)

    return {
        "statuses": statuses(request),
        "time_from": as_utc(f.time_from),
        "time_to": _earliest(as_utc(f.time_to), as_utc(request.as_of)),
        "roles": listed(f.roles),
        "speakers": [s.casefold() for s in f.speakers] if f.speakers is not None else None,
        "kinds": listed(f.kinds),
        "stages": stages,
        "sessions": listed(f.sessions),
        "tags": listed(f.tags),
        "exclude_ids": list(f.exclude_ids),
    }


def _earliest(*moments: datetime | None) -> datetime | None:
    given = [m for m in moments if m is not None]
    return min(given) if given else None


def window_params(plan: Plan, config: RecallConfig) -> list[dict[str, datetime]]:
    """Closed bounds for each time window of the query (open ends become far dates, so
    the statement can always use the (space, event_time) range index)."""
    cfg = config.candidates
    out = []
    for w in plan.windows[: cfg.max_time_windows]:
        if w.soft and not cfg.soft_windows_add_candidates:
            continue
        out.append({"start": as_utc(w.start) or _FAR_PAST, "end": as_utc(w.end) or _FAR_FUTURE})
    return out


def candidate_params(
    space: str,
    request: RecallRequest,
    plan: Plan,
    profile: SpaceProfile,
    config: RecallConfig,
    embeddings: list[list[float]],
    exact_stages: list[str] | None = None,
) -> dict[str, Any]:
    """Parameters of ``recall/candidates``; no ``embeddings``: no vector signals.
    ``exact_stages``: the stage filter, when it is small enough to scan exactly."""
    cfg = config.candidates
    per = cfg.per_signal
    selectivity = profile.selectivity
    vector_k = per[SIGNAL_VECTOR]
    context_k = 0
    if cfg.context_signals_add_candidates and (
        plan.weights[SIGNAL_HEAT] > 0.0 or plan.weights[SIGNAL_RECENCY] > 0.0
    ):
        context_k = max(per[SIGNAL_HEAT], per[SIGNAL_RECENCY])
    fulltext_k = per[SIGNAL_FULLTEXT]
    return {
        "space": space,
        **filter_params(request),
        "embeddings": embeddings,
        "exact": cfg.use_exact_scan(profile.size),
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
        "windows": window_params(plan, config) if embeddings else [],
        "window_k": per[SIGNAL_VECTOR],
        "context_k": context_k,
        "query_speakers": [s.casefold() for s in plan.query_speakers],
    }


def has_lexical_signals(params: dict[str, Any]) -> bool:
    """Whether ``params`` ask for any signal that needs no embedding."""
    return any(params[name] for name in NO_LEXICAL_SIGNALS)


def parse_candidates(rows: list[Row]) -> dict[str, Candidate]:
    """The statement's rows as candidates, each with its best raw score per ranking."""
    pool: dict[str, Candidate] = {}
    for r in rows:
        cand = Candidate(
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
            chunk_count=int(r.get("chunk_count") or 0),
            stamp=r["ingested_at_us"],
        )
        for hit in r["hits"]:
            signal, qi, score = hit["signal"], int(hit["qi"] or 0), float(hit["score"])
            name = f"{SIGNAL_WINDOW}:{qi}" if signal == SIGNAL_WINDOW else signal
            if name not in cand.raw or score > cand.raw[name]:
                cand.raw[name] = score
        pool[cand.id] = cand
    return pool


def merge(pool: dict[str, Candidate], more: dict[str, Candidate]) -> None:
    """Add ``more``'s candidates to ``pool``; a memory in both keeps every signal."""
    for item_id, cand in more.items():
        if item_id in pool:
            pool[item_id].raw.update(cand.raw)
        else:
            pool[item_id] = cand
