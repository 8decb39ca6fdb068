"""Tests for pipelines.recall.presets (search as configuration)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pipelines.recall.config import DEFAULT_SIGNALS
from pipelines.recall.presets import DEFAULT_PRESET, PRESETS, RecallPreset, get_preset


def test_the_ladder_of_presets() -> None:
    assert list(PRESETS) == ["dense", "fulltext", "fused", "fused_rerank", "full_no_late", "full"]
    assert PRESETS["dense"].signals == ("vector",)
    assert PRESETS["fulltext"].signals == ("fulltext",)
    assert PRESETS["fused"].signals == DEFAULT_SIGNALS
    assert not PRESETS["fused"].rerank and PRESETS["fused_rerank"].rerank
    assert PRESETS["full"].rerank and PRESETS["full"].selection
    assert PRESETS["full"].late_interaction and not PRESETS["fused_rerank"].late_interaction
    assert PRESETS["full_no_late"] == PRESETS["full"].model_copy(
        update={
            "name": "full_no_late",
            "description": PRESETS["full_no_late"].description,
            "late_interaction": False,
        }
    )
    assert DEFAULT_PRESET == "full"
    for name, preset in PRESETS.items():
        assert preset.name == name and preset.description


def test_presets_are_frozen_and_validated() -> None:
    with pytest.raises(ValidationError):
        PRESETS["dense"].rerank = True  # type: ignore[misc]
    with pytest.raises(ValidationError, match="unknown signals"):
        RecallPreset(name="x", description="x", signals=("vector", "magic"))
    with pytest.raises(ValidationError, match="unique"):
        RecallPreset(name="x", description="x", signals=("vector", "vector"))
    with pytest.raises(ValidationError):
        RecallPreset(name="x", description="x", signals=())
    with pytest.raises(ValidationError):
        RecallPreset(name="x", description="x", signals=("vector",), bogus=True)


def test_get_preset_names_the_known_ones() -> None:
    assert get_preset("full") is PRESETS["full"]
    with pytest.raises(KeyError, match="fused_rerank"):
        get_preset("nope")
