"""Decay job: consolidation stages that slow heat decay and set heat floors.

Heat is evaluated lazily at read time (:mod:`pipelines.recall.heat`): a memory stores its heat
as of its last access (``heat``, ``last_access``; ``ingested_at`` before the first access) and
readers cool it to the present. This job never rewrites that base (rewriting it without moving
the reference time would decay it twice). It keeps the *stage* values consistent instead:

* ``consolidation_stage`` - ``labile`` -> ``early`` -> ``late`` -> ``consolidated``
  (:func:`consolidation_stage`: age, importance and replays advance a memory; it never
  regresses);
* ``decay_rate`` - the base rate times the stage's multiplier (labile 2.0x ... consolidated
  0.5x) and ``heat_floor`` - the stage's floor (consolidated 0.10), which readers pass to
  :func:`pipelines.recall.heat.effective_heat`;
* ``heat_current`` / ``heat_current_at`` - a snapshot of the effective heat, for browsing and
  for ordering without computing.

Replays are accesses plus restatements (the gate and the merge job add those). A memory is
*schema-congruent* when it mentions a key entity of its stage's schema; congruent memories
consolidate after fewer replays.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pipelines import spaces
from pipelines.consolidate.config import DecayConfig
from pipelines.consolidate.context import JobContext
from pipelines.graph import to_native
from pipelines.recall.heat import effective_heat

STAGES: tuple[str, ...] = ("labile", "early", "late", "consolidated")
_RANK = {s: i for i, s in enumerate(STAGES)}


def consolidation_stage(
    age_hours: float,
    importance: float,
    replays: int,
    congruent: bool,
    previous: str | None,
    config: DecayConfig,
) -> str:
    """The stage a memory has reached (never lower than ``previous``).

    * ``early``: ``age >= early_after_hours`` or ``importance >= early_importance``;
    * ``late``: early, ``age >= late_after_hours`` and (``replays >= late_replays`` or
      ``importance >= late_importance``);
    * ``consolidated``: late, ``age >= consolidated_after_hours`` and ``replays >=
      consolidated_replays`` (``congruent_replays`` when schema-congruent).
    """
    stage = "labile"
    if age_hours >= config.early_after_hours or importance >= config.early_importance:
        stage = "early"
        if age_hours >= config.late_after_hours and (
            replays >= config.late_replays or importance >= config.late_importance
        ):
            stage = "late"
            needed = config.congruent_replays if congruent else config.consolidated_replays
            if age_hours >= config.consolidated_after_hours and replays >= needed:
                stage = "consolidated"
    if previous in _RANK and _RANK[previous] > _RANK[stage]:
        return previous
    return stage


@dataclass(frozen=True, slots=True)
class DecayUpdate:
    id: str
    stage: str
    decay_rate: float
    heat_floor: float
    heat_current: float
    changed_stage: bool


def _stage_inputs(row: dict[str, Any], now: datetime) -> tuple[float, float, int]:
    """(age in hours since ingestion, importance, replays) of a memory row."""
    born = to_native(row.get("ingested_at")) or to_native(row.get("event_time")) or now
    age_hours = max(0.0, (now - born).total_seconds() / 3600.0)
    replays = int(row.get("access_count") or 0) + int(row.get("restatements") or 0)
    raw_importance = row.get("importance")
    importance = 0.5 if raw_importance is None else float(raw_importance)
    return age_hours, importance, replays


def plan_decay(row: dict[str, Any], now: datetime, config: DecayConfig) -> DecayUpdate | None:
    """The update of one memory row (``decay_page`` columns), or ``None`` when nothing moved
    more than ``config.min_change``."""
    born = to_native(row.get("ingested_at")) or to_native(row.get("event_time")) or now
    since = to_native(row.get("last_access")) or born
    age_hours, importance, replays = _stage_inputs(row, now)
    stage = consolidation_stage(
        age_hours, importance, replays, bool(row.get("congruent")), row.get("stage"), config
    )
    rule = config.rule(stage)
    rate = config.base_rate_per_day * rule.decay_multiplier
    heat = float(row["heat"]) if row.get("heat") is not None else 0.0
    current = effective_heat(heat, since, now, rate, rule.heat_floor)
    changed_stage = stage != row.get("stage")
    previous = row.get("heat_current")
    if (
        not changed_stage
        and row.get("decay_rate") == rate
        and row.get("heat_floor") == rule.heat_floor
        and previous is not None
        and abs(float(previous) - current) < config.min_change
    ):
        return None
    return DecayUpdate(row["id"], stage, rate, rule.heat_floor, current, changed_stage)


def _from_ms(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000.0, UTC)


def _congruence_matters(row: dict[str, Any], now: datetime, config: DecayConfig) -> bool:
    """Whether being schema-congruent would make this memory consolidated (only then is it
    worth asking the graph)."""
    age, importance, replays = _stage_inputs(row, now)
    previous = row.get("stage")
    without = consolidation_stage(age, importance, replays, False, previous, config)
    with_ = consolidation_stage(age, importance, replays, True, previous, config)
    return without != "consolidated" and with_ == "consolidated"


def run(ctx: JobContext) -> None:
    cfg = ctx.config.decay
    rows = ctx.store.read("consolidate/decay_rows", space=ctx.space)
    ctx.counts["scanned"] = len(rows)
    for start in range(0, len(rows), cfg.batch_size):
        page = start // cfg.batch_size
        batch = rows[start : start + cfg.batch_size]
        for r in batch:
            r["ingested_at"] = _from_ms(r.pop("ingested_ms"))
            r["event_time"] = _from_ms(r.pop("event_ms"))
            r["last_access"] = _from_ms(r.pop("last_access_ms"))
            r["congruent"] = False
        # congruence only matters where it would make a memory consolidated: ask for those
        maybe = [r["id"] for r in batch if _congruence_matters(r, ctx.now, cfg)]
        if maybe:
            congruent = {
                c["id"]
                for c in ctx.store.read("consolidate/decay_congruent", space=ctx.space, ids=maybe)
            }
            for r in batch:
                r["congruent"] = r["id"] in congruent
        updates = [u for u in (plan_decay(r, ctx.now, cfg) for r in batch) if u is not None]
        for u in updates:
            if u.changed_stage:
                ctx.counts[f"to_{u.stage}"] += 1
                ctx.note({"id": u.id, "stage": u.stage, "heat_current": round(u.heat_current, 4)})
        ctx.counts["stage_changes"] += sum(u.changed_stage for u in updates)
        if updates and not ctx.dry_run:
            written = spaces.write_locked(
                ctx.store,
                ctx.space,
                "consolidate/decay_write",
                now=ctx.now,
                rows=[
                    {
                        "id": u.id,
                        "stage": u.stage,
                        "decay_rate": u.decay_rate,
                        "heat_floor": u.heat_floor,
                        "heat_current": u.heat_current,
                    }
                    for u in updates
                ],
            )[0]["updated"]
            ctx.counts["updated"] += written
        elif ctx.dry_run:
            ctx.counts["would_update"] += len(updates)
        ctx.checkpoint(f"decay:page:{page}")
