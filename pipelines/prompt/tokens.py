"""Token estimation.

Every budget in this package is expressed in the units of a pluggable
:class:`TokenEstimator`.  The default, :class:`CharsPerToken`, is deliberately
conservative: ``ceil(len(text) / 3)`` over-estimates typical BPE tokenisers on
English prose, so a prompt that fits by this count fits the real model too.

Contract an estimator must honour (the algorithms rely on it):

* ``count("") == 0`` and ``count(text) >= 0``;
* deterministic (same text, same count).

Algorithms never *assume* additivity or prefix monotonicity; they verify the
final text with ``count`` and fall back to shorter output when a count
surprises them.  Estimators that are sub-additive
(``count(a + b) <= count(a) + count(b)``, true for ``CharsPerToken``) simply
never trigger those fallbacks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_LIMITS", "CharsPerToken", "PromptLimits", "TokenEstimator", "window_ceiling"]


@runtime_checkable
class TokenEstimator(Protocol):
    """Anything that can count tokens in a string."""

    def count(self, text: str) -> int:
        """Return the (estimated) number of tokens in ``text``."""
        ...


@dataclass(frozen=True, slots=True)
class CharsPerToken:
    """``ceil(len(text) / chars_per_token)`` -- the conservative default estimator."""

    chars_per_token: int = 3

    def __post_init__(self) -> None:
        if self.chars_per_token < 1:
            raise ValueError("chars_per_token must be >= 1")

    def count(self, text: str) -> int:
        """Tokens in ``text``: characters divided by ``chars_per_token``, rounded up."""
        return math.ceil(len(text) / self.chars_per_token)


def window_ceiling(context_window: int, headroom: float) -> int:
    """``floor(context_window * headroom)``, computed exactly on the decimal headroom.

    ``Fraction(str(h))`` avoids float artefacts such as ``100 * 0.29 == 28.999…``.
    """
    if context_window < 0:
        raise ValueError("context_window must be >= 0")
    if not 0 < headroom <= 1:
        raise ValueError("headroom must be in (0, 1]")
    return math.floor(Fraction(context_window) * Fraction(str(headroom)))


class PromptLimits(BaseModel):
    """How much of a window a prompt may use, and the decomposer's limits (context assembly's
    :class:`~pipelines.assemble.config.AssemblyConfig` extends them)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # --- window use -----------------------------------------------------
    headroom: float = Field(
        default=0.75,
        gt=0.0,
        le=1.0,
        description="Fraction of the model window the prompt may use; the rest is left "
        "for the model's answer.",
    )
    safety_margin: int = Field(
        default=64,
        ge=0,
        description="Absolute cap: a prompt never exceeds context_window - safety_margin, "
        "even when min_budget would allow more (very large template shells).",
    )
    chars_per_token: int = Field(
        default=3,
        ge=1,
        description="Conservative default estimator: tokens = ceil(chars / chars_per_token).",
    )

    # --- decomposer ---------------------------------------------------------
    min_budget: int = Field(
        default=300,
        ge=0,
        description="Floor of the variable (slot) budget B so some content always survives.",
    )
    min_share: int = Field(
        default=50,
        ge=0,
        description="Minimum per-slot share when condensing, granted most important first "
        "when the budget cannot give it to every slot.",
    )
    safety_min_tokens: int = Field(
        default=50,
        ge=0,
        description="The safety loop prefers halving slots larger than this; smaller slots "
        "are only emptied, least important first, when nothing larger is left.",
    )
    max_safety_iterations: int = Field(default=50, ge=0)
    max_banner_rounds: int = Field(
        default=8,
        ge=1,
        description="Fixed-point rounds used to reserve room for the truncation banner.",
    )
    warning_threshold: float = Field(
        default=0.9,
        gt=0.0,
        le=1.0,
        description="A slot keeping less than this fraction of its tokens is named in the "
        "truncation banner.",
    )


DEFAULT_LIMITS = PromptLimits()
