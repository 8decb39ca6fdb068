"""Token budgets: how much of a model's window assembly may use, and per phase.

``assembly_budget`` adapts the budget to the model's window (a 4k model and a
200k model get proportionally sized contexts): ``floor(W * headroom)`` minus
the tokens already reserved for the rest of the prompt (system text, query),
with the ``min_budget`` floor and an absolute cap of ``W - safety_margin``.

``split_budget`` divides a total into the three phase budgets (current stage /
related prior context / stage summaries) by the configured split, exactly
(largest-remainder rounding, the parts always sum to the total).

``allocate_phase_budgets`` then hands out the budget given what each phase
actually needs.  Selection is by *count* (decoupled from tokens, see the
design notes' bug about budgets constraining selection), so token demands are
known only after all phases ran; allocation happens then:

1. forward pass: phase ``i`` receives ``min(demand_i, share_i + carry)``; what
   it leaves unused is carried to the next phases;
2. back-fill: budget still unused after phase 3 is given to earlier phases that
   were cut, most important (phase 1) first.

So no budget is wasted while any phase is being cut, and phase 1's share is
never reduced by a later phase.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from pipelines.prompt.tokens import DEFAULT_LIMITS, PromptLimits, window_ceiling

__all__ = [
    "DEFAULT_SPLIT",
    "PhaseAllocation",
    "allocate_phase_budgets",
    "assembly_budget",
    "split_budget",
    "window_ceiling",
]


DEFAULT_SPLIT: tuple[float, float, float] = (0.6, 0.3, 0.1)
"""The default shares of (current stage, related prior context, stage summaries)."""


def assembly_budget(
    context_window: int,
    headroom: float | None = None,
    reserved_tokens: int = 0,
    config: PromptLimits = DEFAULT_LIMITS,
) -> int:
    """Tokens available for assembled memory context in a ``context_window`` model.

    ``max(min_budget, floor(W * h) - reserved)``, but never more than
    ``W - safety_margin - reserved`` and never negative.  ``reserved_tokens``
    is everything else the prompt will contain (template, system text, query).
    """
    if reserved_tokens < 0:
        raise ValueError("reserved_tokens must be >= 0")
    h = config.headroom if headroom is None else headroom
    budget = max(config.min_budget, window_ceiling(context_window, h) - reserved_tokens)
    hard_cap = context_window - config.safety_margin - reserved_tokens
    return max(0, min(budget, hard_cap))


def split_budget(total: int, split: Sequence[float] = DEFAULT_SPLIT) -> tuple[int, int, int]:
    """Split ``total`` tokens into three phase budgets proportional to ``split``.

    Largest-remainder (Hamilton) rounding: each phase gets the floor of its
    exact share, and the leftover tokens go to the largest fractional parts,
    ties to the earlier (more important) phase.  The parts sum to ``total``.
    """
    if total < 0:
        raise ValueError("total must be >= 0")
    if len(split) != 3 or any(part < 0 for part in split) or sum(split) <= 0:
        raise ValueError("split must be three non-negative numbers with a positive sum")
    weights = [Fraction(str(part)) for part in split]
    exact = [total * w / sum(weights) for w in weights]
    parts = [math.floor(x) for x in exact]
    leftover = total - sum(parts)
    order = sorted(range(3), key=lambda i: (-(exact[i] - parts[i]), i))
    for i in order[:leftover]:
        parts[i] += 1
    return parts[0], parts[1], parts[2]


@dataclass(frozen=True, slots=True)
class PhaseAllocation:
    """Result of :func:`allocate_phase_budgets`."""

    demands: tuple[int, int, int]
    """Tokens each phase asked for."""
    shares: tuple[int, int, int]
    """Initial split of the total."""
    granted: tuple[int, int, int]
    """Tokens each phase may use (``<= demand``)."""
    unused: int
    """Budget nobody needed."""

    @property
    def cut(self) -> tuple[bool, bool, bool]:
        """Whether each phase got less than it asked for (and must be condensed)."""
        return (
            self.granted[0] < self.demands[0],
            self.granted[1] < self.demands[1],
            self.granted[2] < self.demands[2],
        )


def allocate_phase_budgets(
    total: int,
    demands: Sequence[int],
    split: Sequence[float] = DEFAULT_SPLIT,
) -> PhaseAllocation:
    """Grant each phase at most its demand, redistributing unused budget.

    See the module docstring for the two passes.  Invariants:
    ``granted[i] <= demands[i]``; ``sum(granted) + unused == total``;
    ``unused > 0`` only if every phase got its full demand; a phase gets at
    least ``min(demand, share)``.
    """
    if len(demands) != 3 or any(d < 0 for d in demands):
        raise ValueError("demands must be three non-negative token counts")
    shares = split_budget(total, split)
    granted = [0, 0, 0]
    carry = 0
    for i in range(3):
        available = shares[i] + carry
        granted[i] = min(demands[i], available)
        carry = available - granted[i]
    for i in range(3):
        extra = min(demands[i] - granted[i], carry)
        granted[i] += extra
        carry -= extra
    return PhaseAllocation(
        demands=(demands[0], demands[1], demands[2]),
        shares=shares,
        granted=(granted[0], granted[1], granted[2]),
        unused=carry,
    )
