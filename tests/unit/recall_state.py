"""Builders for recall states in memory: the recall steps' unit tests run on them, with no
Neo4j (what a step reads from the store is covered by the integration tests)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from pipelines.recall.config import DEFAULT_RECALL_CONFIG, DEFAULT_SIGNALS, RecallConfig
from pipelines.recall.intent import Intent
from pipelines.recall.presets import FULL, RecallPreset
from pipelines.recall.request import RecallRequest
from pipelines.recall.state import Candidate, Plan, RecallState, SpaceProfile
from pipelines.recall.steps.base import StepContext

NOW = datetime(2024, 1, 1, tzinfo=UTC)


def cand(item_id: str, **fields: Any) -> Candidate:
    values: dict[str, Any] = {
        "text": f"text of {item_id}",
        "speaker": None,
        "role": "user",
        "kind": "turn",
        "session_id": None,
        "turn_index": None,
        "stage_id": None,
        "event_time": None,
        "ingested_at": None,
        "heat": None,
        "last_access": None,
    }
    values.update(fields)
    return Candidate(id=item_id, **values)


def plan(**fields: Any) -> Plan:
    values: dict[str, Any] = {
        "query": "what did ann say",
        "content": "what did ann say",
        "vector_text": "what did ann say",
        "k": 3,
        "pool": 5,
        "intent": Intent.SEMANTIC,
        "weights": {s: 1.0 for s in DEFAULT_SIGNALS},
        "keywords": ["ann"],
        "fulltext": "ann",
        "entity_keys": [],
        "query_speakers": [],
        "windows": [],
        "now": NOW,
    }
    values.update(fields)
    return Plan(**values)


def state(
    candidates: Sequence[Candidate] = (),
    ranking: Sequence[tuple[str, float]] = (),
    *,
    preset: RecallPreset = FULL,
    explain: bool = True,
    with_plan: Plan | None = None,
    **request: Any,
) -> RecallState:
    """A state after fusion: the pool, the ranking, and every candidate explained."""
    s = RecallState(
        request=RecallRequest(query="what did ann say", explain=explain, **request),
        preset=preset,
        profile=SpaceProfile(size=100, total=1000, speakers=("Ann", "Bob")),
    )
    s.plan_ = with_plan or plan()
    s.pool = {c.id: c for c in candidates}
    s.set_ranking(list(ranking))
    if explain:
        s.explanations = {c.id: {} for c in candidates}
    return s


class UnitEmbedder:
    """A deterministic 4-dimensional embedder: a text's vector is its length in one axis."""

    dimensions = 4

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([np.eye(4, dtype=np.float32)[len(t) % 4] for t in texts])


def ctx(config: RecallConfig = DEFAULT_RECALL_CONFIG, **fields: Any) -> StepContext:
    """A step context without a store (a step that tried to read would fail)."""
    values: dict[str, Any] = {
        "space": "s",
        "config": config,
        "store": None,
        "embedder": UnitEmbedder(),
        "reranker": None,
        "executor": None,
        "stage_scope_size": lambda stages: 0,
    }
    values.update(fields)
    return StepContext(**values)
