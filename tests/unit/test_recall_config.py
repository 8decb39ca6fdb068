"""Tests for pipelines.recall.config."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from pipelines.errors import InvalidInput
from pipelines.overrides import merge_overrides
from pipelines.recall.config import (
    DEFAULT_RECALL_CONFIG,
    DEFAULT_SIGNALS,
    AbstentionThresholds,
    RecallConfig,
)
from pipelines.recall.intent import Intent


def test_defaults_match_design_values() -> None:
    config = DEFAULT_RECALL_CONFIG
    assert config.fusion.rrf_k == 20
    assert config.signals == ("vector", "fulltext", "entity", "heat", "recency")
    assert config.selection.mmr_lambda == 0.5
    assert config.rerank.weight == 0.55
    assert config.candidates.exact_scan_threshold == 8_000


def test_every_step_has_its_own_section() -> None:
    sections = {
        name
        for name, info in RecallConfig.model_fields.items()
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)
    }
    assert sections == {
        "query",
        "candidates",
        "fusion",
        "heat",
        "rerank",
        "session_documents",
        "late_interaction",
        "session_late_interaction",
        "selection",
        "order",
        "echoes",
        "abstention",
    }


def test_every_intent_has_a_complete_profile() -> None:
    for intent in Intent:
        profile = DEFAULT_RECALL_CONFIG.weights_for(intent)
        assert set(profile) == set(DEFAULT_SIGNALS)
        assert all(weight >= 0 for weight in profile.values())
        assert profile["vector"] > 0


def test_profiles_reflect_intent() -> None:
    weights = DEFAULT_RECALL_CONFIG.weights_for
    assert weights(Intent.KNOWLEDGE_UPDATE)["recency"] > weights(Intent.SEMANTIC)["recency"]
    assert weights(Intent.KNOWLEDGE_UPDATE)["recency"] > weights(Intent.TEMPORAL)["recency"]
    assert weights(Intent.ENTITY)["entity"] > weights(Intent.SEMANTIC)["entity"]


def test_weights_for_returns_a_copy() -> None:
    profile = DEFAULT_RECALL_CONFIG.weights_for(Intent.SEMANTIC)
    profile["vector"] = 99.0
    assert DEFAULT_RECALL_CONFIG.weights_for(Intent.SEMANTIC)["vector"] != 99.0


def test_config_is_frozen_and_rejects_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        DEFAULT_RECALL_CONFIG.fusion.rrf_k = 10  # type: ignore[misc]
    with pytest.raises(ValidationError):
        RecallConfig(not_a_field=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        RecallConfig.model_validate({"rerank": {"not_a_field": 1}})


def test_json_round_trip() -> None:
    dumped = DEFAULT_RECALL_CONFIG.model_dump_json()
    assert RecallConfig.model_validate_json(dumped) == DEFAULT_RECALL_CONFIG


def test_overrides_derive_a_validated_variant() -> None:
    variant = merge_overrides(DEFAULT_RECALL_CONFIG, {"selection": {"mmr_lambda": 0.8}}, "recall")
    assert variant.selection.mmr_lambda == 0.8
    assert variant.selection.min_pool == DEFAULT_RECALL_CONFIG.selection.min_pool
    assert DEFAULT_RECALL_CONFIG.selection.mmr_lambda == 0.5
    with pytest.raises(InvalidInput) as err:
        merge_overrides(DEFAULT_RECALL_CONFIG, {"selection": {"mmr_lambda": 1.5}}, "recall")
    assert err.value.field == "recall.selection.mmr_lambda"


def test_missing_intent_profile_is_rejected() -> None:
    weights = {i: DEFAULT_RECALL_CONFIG.weights_for(i) for i in Intent if i != Intent.CAUSAL}
    with pytest.raises(ValidationError, match="causal"):
        RecallConfig(intent_weights=weights)


def test_profile_with_unknown_signal_is_rejected() -> None:
    weights = {i: DEFAULT_RECALL_CONFIG.weights_for(i) for i in Intent}
    weights[Intent.SEMANTIC]["trigram"] = 0.3
    with pytest.raises(ValidationError, match="must weight exactly"):
        RecallConfig(intent_weights=weights)


def test_negative_weight_is_rejected() -> None:
    weights = {i: DEFAULT_RECALL_CONFIG.weights_for(i) for i in Intent}
    weights[Intent.SEMANTIC]["heat"] = -0.1
    with pytest.raises(ValidationError):
        RecallConfig(intent_weights=weights)


def test_intent_keys_accept_plain_strings() -> None:
    weights = {str(i): DEFAULT_RECALL_CONFIG.weights_for(i) for i in Intent}
    config = RecallConfig(intent_weights=weights)
    assert config.weights_for(Intent.TEMPORAL) == DEFAULT_RECALL_CONFIG.weights_for(Intent.TEMPORAL)


def test_out_of_range_values_are_rejected() -> None:
    with pytest.raises(ValidationError):
        RecallConfig.model_validate({"selection": {"mmr_lambda": 1.5}})
    with pytest.raises(ValidationError):
        RecallConfig.model_validate({"rerank": {"weight": -0.1}})
    with pytest.raises(ValidationError, match="cover exactly the signals"):
        RecallConfig.model_validate({"candidates": {"per_signal": {"vector": 10}}})


def test_abstention_thresholds_validation() -> None:
    with pytest.raises(ValidationError, match="strong_vector_similarity"):
        AbstentionThresholds(min_vector_similarity=0.5, strong_vector_similarity=0.4)
    with pytest.raises(ValidationError, match="positive"):
        AbstentionThresholds(
            weight_vector=0, weight_keywords=0, weight_fulltext=0, weight_agreement=0
        )


def test_exact_scan_for_small_spaces_needs_no_overfetch() -> None:
    config = DEFAULT_RECALL_CONFIG.candidates
    assert config.use_exact_scan(config.exact_scan_threshold)
    assert not config.use_exact_scan(config.exact_scan_threshold + 1)
    assert config.vector_fetch_size(100, space_size=500, filter_selectivity=0.01) == 100


def test_vector_fetch_size_scales_with_selectivity_and_attempt() -> None:
    config = DEFAULT_RECALL_CONFIG.candidates
    big = 1_000_000
    assert config.vector_fetch_size(100, space_size=big) == 200
    assert config.vector_fetch_size(100, space_size=big, filter_selectivity=0.5) == 400
    assert config.vector_fetch_size(100, space_size=big, attempt=1) == 400
    # capped, and never below what was asked for
    assert config.vector_fetch_size(100, space_size=big, filter_selectivity=1e-9) == 2_000
    assert config.vector_fetch_size(5_000, space_size=big) == 5_000
    assert config.vector_fetch_size(0, space_size=big) == 0
    with pytest.raises(ValueError):
        config.vector_fetch_size(10, space_size=big, attempt=-1)
