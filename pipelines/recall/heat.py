"""Heat and recency: the two non-content retrieval signals.

*Recency* scores how recently something happened with exponential half-life decay:
``recency = 2^(−age / half_life)``, 1.0 for "now" (and for future timestamps), 0.5 after
one half-life.

*Heat* is a stored value in [0, 1] that rises each time a memory is recalled and cools
down between accesses. It is decayed lazily: the database keeps ``(stored_heat,
last_access)`` and readers compute the current value on the fly with
:func:`effective_heat`, so no periodic job has to rewrite every node. An access first
brings the stored heat up to date, then applies :func:`heat_after_access`; see
:func:`touch`.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from pipelines.recall.config import DEFAULT_RECALL_CONFIG

_SECONDS_PER_DAY = 86_400.0


def _clamp_unit(value: float) -> float:
    if math.isnan(value):
        raise ValueError("heat must not be NaN")
    return min(1.0, max(0.0, value))


def _age_days(then: datetime, now: datetime) -> float:
    """Non-negative age in days; mixing naive and aware datetimes raises ``TypeError``."""
    return max(0.0, (now - then).total_seconds() / _SECONDS_PER_DAY)


def recency_score(
    event_time: datetime,
    now: datetime,
    half_life: timedelta = timedelta(days=DEFAULT_RECALL_CONFIG.fusion.recency_half_life_days),
) -> float:
    """Exponential recency ``2^(−age/half_life)`` in (0, 1]; future events score 1.0."""
    half_life_days = half_life.total_seconds() / _SECONDS_PER_DAY
    if half_life_days <= 0.0:
        raise ValueError("half_life must be positive")
    return float(2.0 ** (-_age_days(event_time, now) / half_life_days))


def heat_after_access(
    heat: float,
    boost: float = DEFAULT_RECALL_CONFIG.heat.access_boost,
) -> float:
    """Heat right after a recall: ``h + boost·(1 − h)``.

    The boost closes a fixed fraction of the gap to 1.0, so heat rises monotonically with
    diminishing returns and never leaves [0, 1] (input heat is clamped first).
    """
    if not 0.0 <= boost <= 1.0:
        raise ValueError("boost must be in [0, 1]")
    current = _clamp_unit(heat)
    return _clamp_unit(current + boost * (1.0 - current))


def effective_heat(
    stored_heat: float,
    last_access: datetime,
    now: datetime,
    decay_rate: float = DEFAULT_RECALL_CONFIG.heat.decay_rate_per_day,
    floor: float = DEFAULT_RECALL_CONFIG.heat.floor,
) -> float:
    """Current heat from the stored value: ``max(h·e^(−rate·Δt_days), min(h, floor))``.

    Exponential cooling since ``last_access`` with ``decay_rate`` per day (half-life
    ``ln 2 / rate`` days). The floor keeps important memories from cooling below it but
    never *raises* a memory whose stored heat is already below the floor. ``last_access``
    in the future counts as now.
    """
    if decay_rate < 0.0 or not math.isfinite(decay_rate):
        raise ValueError("decay_rate must be finite and >= 0")
    if not 0.0 <= floor <= 1.0:
        raise ValueError("floor must be in [0, 1]")
    heat = _clamp_unit(stored_heat)
    cooled = heat * math.exp(-decay_rate * _age_days(last_access, now))
    return max(cooled, min(heat, floor))


def touch(
    stored_heat: float,
    last_access: datetime,
    now: datetime,
    *,
    decay_rate: float = DEFAULT_RECALL_CONFIG.heat.decay_rate_per_day,
    floor: float = DEFAULT_RECALL_CONFIG.heat.floor,
    boost: float = DEFAULT_RECALL_CONFIG.heat.access_boost,
) -> float:
    """The heat to store (with ``last_access = now``) when a memory is recalled at ``now``.

    ``heat_after_access(effective_heat(...))``: cool down to the present, then boost.
    """
    return heat_after_access(
        effective_heat(stored_heat, last_access, now, decay_rate, floor), boost
    )
