"""Pure planning helpers of the assembly service (no I/O).

The service (:mod:`pipelines.assemble.service`) gathers candidates from the graph; everything it
decides *about* them without touching the database lives here, so it is unit-tested in
isolation:

* :func:`build_template` / :func:`prompt_budget` -- the prompt template (caller slots, the
  context sections, the query) and the budget quantities the decomposer will use for it, known
  *before* the sections are filled (so phases can be sized to them);
* :func:`grouped_costs` -- what each item of a ranked list adds to its section when items
  share group lines (a record's ``[when | stage]`` is paid by the first record under it);
* :func:`plan_phase_counts` -- how many ranked items of each phase go into the context: at least
  a minimum count per phase (selection by count, never shrunk by item size), then as many more as
  fit the phase's share of the budget, then budget nobody used flows to the phases in order of
  importance (phase 1 first); :func:`extend_prefixes` then spends what an exact count of the
  rendered result leaves, in the same order;
* :func:`vote_stages` -- the current stage from query-derived evidence: rank votes of the
  query's recalled hits and of the stages' summaries; :func:`stage_confidence` -- how far the
  vote is to be trusted;
* :func:`seed_groups` -- seeds of equal weight grouped, so Personalized PageRank runs once per
  weight group instead of once per seed (a multi-source PageRank run is the sum of the
  single-source runs, so ``sum_g w_g * run(group_g)`` equals ``sum_s w_s * run(s)``);
* :func:`order_stages_by_distance` -- Phase 3's order: nearest in time to the current stage first;
* :func:`render_schema` -- a stage schema (entities, decisions, outcomes, open questions) as text;
* :func:`short_time` -- compact ISO provenance timestamps; :func:`dates_needing_minutes` and
  :func:`record_time` -- a record's time at the precision the context needs (the time of day
  only on dates whose records differ in it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from pipelines.assemble.budget import split_budget, window_ceiling
from pipelines.assemble.config import DEFAULT_ASSEMBLY_CONFIG, AssemblyConfig
from pipelines.assemble.decomposer import fill_template
from pipelines.assemble.stage_inference import StageChoice
from pipelines.assemble.tokens import TokenEstimator

__all__ = [
    "PhasePlan",
    "PromptBudget",
    "StageSpan",
    "build_template",
    "confident_split",
    "dates_needing_minutes",
    "extend_prefixes",
    "grouped_costs",
    "order_stages_by_distance",
    "plan_phase_counts",
    "prompt_budget",
    "record_time",
    "render_schema",
    "seed_groups",
    "short_time",
    "stage_confidence",
    "vote_stages",
]


# ------------------------------------------------------------------------------ template


def build_template(
    leading_keys: Sequence[str],
    context_keys: Sequence[str],
    query_key: str,
    query_title: str,
    preamble: str | None = None,
) -> str:
    """``{{KEY}}`` placeholders separated by blank lines: the caller's slots first (in the
    order given), then ``preamble`` (e.g. the note that recalled records are data), the context
    sections, and the query under its own header.  ``preamble`` must not contain ``{{``."""
    if preamble is not None and "{{" in preamble:
        raise ValueError("the preamble must not contain placeholders")
    parts = [f"{{{{{key}}}}}" for key in leading_keys]
    if preamble:
        parts.append(preamble)
    parts.extend(f"{{{{{key}}}}}" for key in context_keys)
    parts.append(f"## {query_title}\n{{{{{query_key}}}}}")
    return "\n\n".join(parts)


@dataclass(frozen=True, slots=True)
class PromptBudget:
    """The decomposer's budget quantities for a template (see
    :mod:`pipelines.assemble.decomposer`): identical to what ``decompose`` computes."""

    ceiling: int
    shell_tokens: int
    budget: int
    limit: int
    content_budget: int


def prompt_budget(
    template: str,
    keys: Iterable[str],
    context_window: int,
    headroom: float,
    estimator: TokenEstimator,
    config: AssemblyConfig = DEFAULT_ASSEMBLY_CONFIG,
) -> PromptBudget:
    """The quantities :func:`~pipelines.assemble.decomposer.decompose` will derive for
    ``template`` in a ``context_window``-token model (shell, budget ``B``, limit ``L``, and the
    content budget the slots share)."""
    ceiling = window_ceiling(context_window, headroom)
    shell = estimator.count(fill_template(template, {key: "" for key in keys}))
    budget = max(config.min_budget, ceiling - shell)
    limit = max(0, min(shell + budget, context_window - config.safety_margin))
    content = max(0, min(budget, limit - shell))
    return PromptBudget(ceiling, shell, budget, limit, content)


# ------------------------------------------------------------------------------ phase plan


def grouped_costs(items: Sequence[tuple[Hashable | None, int, int]]) -> list[int]:
    """Each item's marginal tokens in a ranked list of ``(group, tokens, group_tokens)``: its
    own tokens, plus its group's line when it is the first item of that group (``None``: no
    group line).  Exact for every prefix of the list, which is all :func:`plan_phase_counts`
    ever takes, since a section renders one line per group of the items it holds."""
    seen: set[Hashable] = set()
    costs = []
    for group, tokens, group_tokens in items:
        first = group is not None and group not in seen
        seen.add(group)
        costs.append(tokens + (group_tokens if first else 0))
    return costs


@dataclass(frozen=True, slots=True)
class PhasePlan:
    """Outcome of :func:`plan_phase_counts`."""

    counts: tuple[int, ...]
    """Items taken from the head of each phase's ranked list."""
    tokens: tuple[int, ...]
    """Tokens of the items taken, per phase."""
    shares: tuple[int, ...]
    """Each phase's share of the budget by the split."""
    unused: int
    """Budget left after all phases (``0`` whenever an item was left out for lack of room)."""


def plan_phase_counts(
    item_tokens: Sequence[Sequence[int]],
    budget: int,
    split: Sequence[float],
    min_counts: Sequence[int],
) -> PhasePlan:
    """How many items of each phase's ranked list go into the context.

    1. Every phase takes its first ``min_counts[i]`` items (or all it has), whatever they cost:
       selection is by count, so a few long items never shrink it (the decomposer condenses
       later if the minimums alone overflow).
    2. Each phase then extends its prefix while the next item fits in its share of ``budget``
       (largest-remainder split by ``split``) and in what is left of the whole budget.
    3. What is left of the whole budget goes to the phases in order (phase 1 first), each
       extending its prefix while the next item fits.

    Items are always a prefix of each ranked list (rank order is never skipped over).
    Invariants: ``counts[i] >= min(min_counts[i], len(item_tokens[i]))``; when no phase
    exceeds its minimum, ``sum(tokens) <= max(budget, sum of the minimums' tokens)``.
    """
    n = len(item_tokens)
    if len(min_counts) != n or len(split) != n:
        raise ValueError("item_tokens, split and min_counts must have the same length")
    if n != 3:
        raise ValueError("there are exactly three phases")
    if any(t < 0 for items in item_tokens for t in items) or any(c < 0 for c in min_counts):
        raise ValueError("token counts and minimum counts must be non-negative")
    total = max(budget, 0)
    shares = split_budget(total, split)
    counts = [min(min_counts[i], len(item_tokens[i])) for i in range(n)]
    used = [sum(item_tokens[i][: counts[i]]) for i in range(n)]
    left = total - sum(used)  # may be negative when the minimums overflow
    for i in range(n):
        while counts[i] < len(item_tokens[i]):
            cost = item_tokens[i][counts[i]]
            if used[i] + cost > shares[i] or cost > left:
                break
            used[i] += cost
            left -= cost
            counts[i] += 1
    for i in range(n):
        while counts[i] < len(item_tokens[i]) and item_tokens[i][counts[i]] <= left:
            left -= item_tokens[i][counts[i]]
            used[i] += item_tokens[i][counts[i]]
            counts[i] += 1
    return PhasePlan(tuple(counts), tuple(used), tuple(shares), max(left, 0))


def extend_prefixes(
    counts: Sequence[int],
    lengths: Sequence[int],
    fits: Callable[[list[int]], bool],
    phases: Sequence[int] | None = None,
) -> list[int]:
    """``counts`` (prefix lengths of ranked lists of ``lengths``) with each of ``phases`` (all,
    in order, by default) extended one item at a time while ``fits`` holds for the counts so
    far: the plan's leftover step, checked on the whole (e.g. the rendered sections' exact
    token count) instead of on per-item estimates that each round up.  Prefixes only grow,
    and a phase stops at its first item that does not fit."""
    if len(counts) != len(lengths):
        raise ValueError("counts and lengths must have the same length")
    out = list(counts)
    for n in range(len(out)) if phases is None else phases:
        while out[n] < lengths[n]:
            trial = [c + 1 if m == n else c for m, c in enumerate(out)]
            if not fits(trial):
                break
            out = trial
    return out


# ------------------------------------------------------------------------------ stages


def vote_stages(
    ranked_hit_stages: Sequence[str | None],
    summary_similarity: Mapping[str, float],
    recency: Mapping[str, float],
    config: AssemblyConfig = DEFAULT_ASSEMBLY_CONFIG,
) -> StageChoice:
    """The current stage from the query's recalled hits, by rank votes.

    A hit at rank ``r`` (1-based) gives its stage ``w_hits / (c + r)``; the stages whose schema
    summary is built, ranked by the query's similarity to it, get ``w_summaries / (c + r)``
    (``c`` = ``stage_vote_rank_constant``).  The best total wins; every stage within
    ``stage_tie_margin`` (relative) of it counts as tied and the most recent tied stage wins.
    With no votes at all the most recent stage is taken (``fallback``).  Hits of stages not
    in ``recency`` (e.g. not started at ``as_of``) are ignored.  Only query-derived evidence.

    Why votes and not similarities: recall's fused ranking (vector, full text, entities,
    rerank) already ordered the memories; several well-ranked hits of one stage are the
    evidence that the query is about it.
    """
    c = config.stage_vote_rank_constant
    votes: dict[str, float] = {}
    for rank, stage in enumerate(ranked_hit_stages, start=1):
        if stage is not None and stage in recency:
            votes[stage] = votes.get(stage, 0.0) + config.stage_vote_weight_hits / (c + rank)
    ranked_summaries = sorted(
        (st for st in summary_similarity if st in recency),
        key=lambda st: (-summary_similarity[st], st),
    )
    for rank, stage in enumerate(ranked_summaries, start=1):
        votes[stage] = votes.get(stage, 0.0) + config.stage_vote_weight_summaries / (c + rank)
    votes = {st: v for st, v in votes.items() if v > 0}
    stages = list(recency)

    def most_recent(candidates: Sequence[str]) -> str:
        return max(candidates, key=lambda st: (recency[st], -stages.index(st)))

    if not votes:
        if not stages:
            return StageChoice(None, None, None, None, False, False, {}, "No stages.")
        stage = most_recent(stages)
        return StageChoice(
            stage,
            None,
            None,
            None,
            False,
            True,
            {},
            f"No recalled memory or summary points at a stage; chose the most recent, {stage!r}.",
        )
    best = max(votes.values())
    tied = [st for st in votes if votes[st] >= best * (1.0 - config.stage_tie_margin)]
    stage = most_recent(tied)
    others = sorted((st for st in votes if st != stage), key=lambda st: -votes[st])
    runner_up = others[0] if others else None
    margin = votes[stage] - votes[runner_up] if runner_up is not None else None
    return StageChoice(
        stage=stage,
        score=votes[stage],
        runner_up=runner_up,
        margin=margin,
        tie_broken_by_recency=len(tied) > 1,
        fallback=False,
        scores=votes,
        reasoning=_vote_reasoning(
            stage, votes, tied, runner_up, margin, ranked_hit_stages, ranked_summaries
        ),
    )


def _vote_reasoning(
    stage: str,
    votes: Mapping[str, float],
    tied: Sequence[str],
    runner_up: str | None,
    margin: float | None,
    ranked_hit_stages: Sequence[str | None],
    ranked_summaries: Sequence[str],
) -> str:
    """Why :func:`vote_stages` chose ``stage``, in one sentence."""
    if len(tied) > 1:
        best = max(votes.values())
        return (
            f"{len(tied)} stages tied on recall votes ({best:.4f}): "
            f"{', '.join(map(repr, sorted(tied)))}; chose the most recent, {stage!r}."
        )
    hits = sum(1 for st in ranked_hit_stages if st == stage)
    return (
        f"Stage {stage!r} has the most recall votes ({votes[stage]:.4f}, {hits} of the "
        f"{len(ranked_hit_stages)} hits"
        + (
            f", summary rank {ranked_summaries.index(stage) + 1}"
            if stage in ranked_summaries
            else ""
        )
        + ")"
        + (f", {margin:.4f} ahead of {runner_up!r}." if runner_up is not None else ".")
    )


def stage_confidence(
    choice: StageChoice, config: AssemblyConfig = DEFAULT_ASSEMBLY_CONFIG
) -> float:
    """How sure the vote is, in [0, 1]: the relative margin ``(best - runner_up) / best``
    (1 without a runner-up) mapped linearly from ``stage_confidence_floor`` (0) to
    ``stage_confidence_full`` (1).  A fallback choice (no evidence) has confidence 0."""
    if choice.stage is None or choice.fallback or not choice.score:
        return 0.0
    margin = 1.0 if choice.margin is None else max(0.0, choice.margin) / choice.score
    low, full = config.stage_confidence_floor, config.stage_confidence_full
    if full <= low:
        return 1.0 if margin >= full else 0.0
    return min(1.0, max(0.0, (margin - low) / (full - low)))


def confident_split(split: Sequence[float], confidence: float) -> tuple[float, float, float]:
    """The phase split with the current stage's share scaled by ``confidence``; what it gives
    up goes to related context (Phase 2).  Still sums to 1."""
    if len(split) != 3:
        raise ValueError("split has three parts")
    c = min(1.0, max(0.0, confidence))
    return (split[0] * c, split[1] + split[0] * (1.0 - c), split[2])


@dataclass(frozen=True, slots=True)
class StageSpan:
    """A stage's place in time."""

    id: str
    started_at: datetime | None
    ended_at: datetime | None
    ordinal: int | None = None


def _seconds_apart(a: StageSpan, b: StageSpan) -> float:
    """Gap between two time intervals (0 when they overlap); ``inf`` if a time is missing."""
    if a.started_at is None or b.started_at is None:
        return math.inf
    a_end = a.ended_at or a.started_at
    b_end = b.ended_at or b.started_at
    if a_end < b.started_at:
        return (b.started_at - a_end).total_seconds()
    if b_end < a.started_at:
        return (a.started_at - b_end).total_seconds()
    return 0.0


def order_stages_by_distance(current: StageSpan | None, stages: Sequence[StageSpan]) -> list[str]:
    """Stage ids ordered by distance in time from ``current`` (nearest first).

    Ties (and stages without times) are broken by ordinal distance, then earlier stage first,
    then id.  Without a current stage, the most recent stages come first.
    """
    if current is None:
        ranked = sorted(
            stages,
            key=lambda s: (
                s.ended_at is None and s.started_at is None,
                -(s.ended_at or s.started_at or datetime.min.replace(tzinfo=UTC)).timestamp(),
                s.id,
            ),
        )
        return [s.id for s in ranked]

    def key(s: StageSpan) -> tuple[float, float, float, str]:
        ordinal_gap = (
            abs(s.ordinal - current.ordinal)
            if s.ordinal is not None and current.ordinal is not None
            else math.inf
        )
        return (_seconds_apart(current, s), ordinal_gap, s.ordinal or 0, s.id)

    return [s.id for s in sorted((s for s in stages if s.id != current.id), key=key)]


# ------------------------------------------------------------------------------ rendering

_SCHEMA_LISTS = (
    ("entities", "Entities"),
    ("decisions", "Decisions"),
    ("outcomes", "Outcomes"),
    ("open_questions", "Open questions"),
)


def _items(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, Iterable):
        out = []
        for item in value:
            if isinstance(item, Mapping):
                text = item.get("text") or item.get("name") or item.get("key")
            else:
                text = item
            if text is not None and str(text).strip():
                out.append(" ".join(str(text).split()))
        return out
    return [str(value)]


def render_schema(schema: Mapping[str, Any]) -> str:
    """A stage schema as compact text.

    The consolidation job's ``summary`` already carries every slot (key entities, decisions,
    outcomes, open questions, highlights) as one bounded text, so when present it is the
    rendering.  Otherwise the slots are listed: the entities on one line, then decisions,
    outcomes and open questions as bullet lists (empty parts omitted).
    """
    summary = schema.get("summary")
    if isinstance(summary, str) and summary.strip():
        return summary.strip()
    lines: list[str] = []
    for field, title in _SCHEMA_LISTS:
        values = _items(schema.get(field))
        if not values:
            continue
        if field == "entities":
            lines.append(f"{title}: {', '.join(values)}")
        else:
            lines.append(f"{title}:")
            lines.extend(f"- {v}" for v in values)
    return "\n".join(lines)


def short_time(moment: datetime | None) -> str | None:
    """``YYYY-MM-DD HH:MM`` in UTC (seconds dropped: provenance, not a timestamp key)."""
    if moment is None:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M")


def _utc_minute(moment: datetime) -> datetime:
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.replace(second=0, microsecond=0, tzinfo=None)


def dates_needing_minutes(moments: Iterable[datetime | None]) -> frozenset[date]:
    """The (UTC) dates on which ``moments`` differ in their time of day (to the minute).

    Only there does a record's ``HH:MM`` tell the reader something its date does not: the
    order of that day's records.  Where every record of a day shares one time (a conversation
    session stamped once, a day with a single record) the date alone says as much and saves
    about two tokens per record.
    """
    minutes: dict[date, set[datetime]] = {}
    for moment in moments:
        if moment is not None:
            minute = _utc_minute(moment)
            minutes.setdefault(minute.date(), set()).add(minute)
    return frozenset(day for day, seen in minutes.items() if len(seen) > 1)


def record_time(
    moment: datetime | None, precision: str, minute_dates: frozenset[date] = frozenset()
) -> str | None:
    """A record's time: ``YYYY-MM-DD HH:MM`` (``precision`` "minute"), ``YYYY-MM-DD``
    ("date"), or for "auto" the minute only on ``minute_dates``
    (:func:`dates_needing_minutes`)."""
    if moment is None:
        return None
    if precision not in ("auto", "minute", "date"):
        raise ValueError(f"unknown time precision {precision!r}")
    full = short_time(moment)
    if precision == "minute":
        return full
    if precision == "auto" and _utc_minute(moment).date() in minute_dates:
        return full
    return full[:10] if full else None


# ------------------------------------------------------------------------------ PPR seeds


def seed_groups(weights: Mapping[str, float], digits: int = 9) -> list[tuple[float, list[str]]]:
    """Seeds grouped by equal weight (rounded to ``digits``), heaviest group first; seeds keep
    their input order inside a group.  Zero and negative weights are left out.

    One multi-source PageRank run per group then replaces one run per seed: GDS restarts a run
    at every source with the same mass, and the result is the sum of the single-source runs.
    """
    groups: dict[float, list[str]] = {}
    for seed, weight in weights.items():
        if weight > 0:
            groups.setdefault(round(weight, digits), []).append(seed)
    return sorted(groups.items(), key=lambda item: -item[0])
