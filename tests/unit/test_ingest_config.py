"""Tests for pipelines.ingest.config."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from pipelines.ingest.config import (
    DEFAULT_INGEST_CONFIG,
    EntityConfig,
    FactConfig,
    GateConfig,
    IngestConfig,
    StageConfig,
)


def test_defaults_match_the_design() -> None:
    cfg = DEFAULT_INGEST_CONFIG
    assert cfg.gate.enabled is False  # bulk imports store everything verbatim
    assert cfg.stages.time_gap == timedelta(hours=4)
    assert cfg.max_content_chars == 4_000_000  # a pasted file or log, stored verbatim
    assert "PERSON" in cfg.entities.keep_labels
    assert not {"DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT"} & (
        cfg.entities.keep_labels
    )
    weights = (cfg.gate.novelty_weight, cfg.gate.salience_weight, cfg.gate.prediction_error_weight)
    assert weights == (0.25, 0.20, 0.30)


def test_models_are_frozen_and_hashable() -> None:
    cfg = IngestConfig()
    with pytest.raises(ValidationError):
        cfg.max_content_chars = 5  # type: ignore[misc]
    with pytest.raises(ValidationError):
        cfg.gate.enabled = True  # type: ignore[misc]
    assert hash(cfg) == hash(IngestConfig())
    assert {cfg: 1}[IngestConfig()] == 1


def test_unknown_fields_are_rejected() -> None:
    with pytest.raises(ValidationError):
        GateConfig(enable=True)  # type: ignore[call-arg]


def test_mappings_are_accepted_and_stored_as_sorted_pairs() -> None:
    ent = EntityConfig(aliases={"SF": "San Francisco", "LA": "Los Angeles"})
    assert ent.aliases == (("LA", "Los Angeles"), ("SF", "San Francisco"))
    gate = GateConfig(category_offsets={"decision": -0.1})
    assert gate.offset_for("Decision") == pytest.approx(-0.1)
    assert gate.offset_for("question") == 0.0
    assert gate.offset_for(None) == 0.0


def test_default_category_offsets_lower_the_bar_for_decisions() -> None:
    assert DEFAULT_INGEST_CONFIG.gate.offset_for("decision") < 0
    assert DEFAULT_INGEST_CONFIG.gate.offset_for("correction") < 0


def test_roles_are_casefolded() -> None:
    assert FactConfig(user_roles=["User", "HUMAN"]).user_roles == frozenset({"user", "human"})
    assert FactConfig(user_roles="Me").user_roles == frozenset({"me"})


@pytest.mark.parametrize(
    "kwargs",
    [
        {"threshold": 1.5},
        {"salience_floor": -0.1},
        {"novelty_weight": -1},
        {"compression_level": 0},
    ],
)
def test_invalid_gate_values_fail(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        GateConfig(**kwargs)


def test_negative_time_gap_fails() -> None:
    with pytest.raises(ValidationError):
        StageConfig(time_gap=timedelta(hours=-1))


def test_round_trips_through_json() -> None:
    cfg = IngestConfig(gate=GateConfig(enabled=True), stages=StageConfig(time_gap=timedelta(1)))
    assert IngestConfig.model_validate_json(cfg.model_dump_json()) == cfg
