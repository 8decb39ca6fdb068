"""Tests for the assembly configuration and the token estimator."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pipelines.assemble.config import DEFAULT_ASSEMBLY_CONFIG, AssemblyConfig
from pipelines.prompt.tokens import CharsPerToken, TokenEstimator


def test_defaults() -> None:
    c = DEFAULT_ASSEMBLY_CONFIG
    assert (c.headroom, c.split, c.min_budget, c.min_share) == (0.75, (0.6, 0.3, 0.1), 300, 50)
    assert (c.warning_threshold, c.oversample, c.mmr_lambda, c.ppr_damping) == (0.9, 3, 0.5, 0.85)
    assert c.max_safety_iterations == 50 and c.chars_per_token == 3


@pytest.mark.parametrize(
    "kwargs",
    [
        {"split": (0.0, 0.0, 0.0)},
        {"split": (1.2, -0.1, -0.1)},
        {"headroom": 0.0},
        {"headroom": 1.5},
        {"ppr_damping": 1.0},
        {"unknown_knob": 1},
    ],
)
def test_invalid_configs_are_rejected(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        AssemblyConfig(**kwargs)


def test_config_is_frozen() -> None:
    with pytest.raises(ValidationError):
        DEFAULT_ASSEMBLY_CONFIG.headroom = 0.5  # type: ignore[misc]


def test_chars_per_token_is_a_conservative_ceiling() -> None:
    est = CharsPerToken()
    assert [est.count(t) for t in ("", "a", "abc", "abcd")] == [0, 1, 1, 2]
    assert CharsPerToken(4).count("x" * 9) == 3
    assert isinstance(est, TokenEstimator)
    with pytest.raises(ValueError):
        CharsPerToken(0)
