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
from typing import Protocol, runtime_checkable

__all__ = ["CharsPerToken", "TokenEstimator"]


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
