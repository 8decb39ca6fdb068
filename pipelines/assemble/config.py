"""Every tunable of context assembly, in one frozen, validated model.

The assembly algorithms in this package are pure functions; they take an
:class:`AssemblyConfig` instead of reading globals so that the service, the
benchmarks and the tests can vary one knob at a time.  Defaults follow the
design notes (75 % window use, a 60/30/10 phase split, a 300-token content
floor, 50-token minimum shares, a 90 % retention warning threshold, PPR with
damping 0.85) except where a deviation is documented on the field.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import ConfigDict, Field, field_validator
from pydantic.config import JsonDict

from pipelines.prompt.budget import DEFAULT_SPLIT
from pipelines.prompt.tokens import PromptLimits

__all__ = ["DEFAULT_ASSEMBLY_CONFIG", "SPLIT_SCHEMA", "AssemblyConfig", "shares", "split_schema"]


#: The JSON schema of a split: three non-negative numbers, at least one of them positive.
SPLIT_SCHEMA: JsonDict = {
    "type": "array",
    "items": {"type": "number", "minimum": 0},
    "minItems": 3,
    "maxItems": 3,
    "contains": {"type": "number", "exclusiveMinimum": 0},
}


def shares(parts: Sequence[float]) -> tuple[float, float, float]:
    """Three relative shares as fractions of their sum (``(3, 1, 0)`` is ``(0.75, 0.25, 0)``).

    Raises:
        ValueError: not three finite non-negative numbers, or all of them 0.
    """
    if len(parts) != 3 or any(p < 0 or not math.isfinite(p) for p in parts):
        raise ValueError("split must be three finite, non-negative shares")
    top = max(parts)
    if top <= 0:
        raise ValueError("split must have a positive share")
    scaled = [p / top for p in parts]  # no overflow however large the shares
    total = sum(scaled)
    a, b, c = (p / total for p in scaled)
    return a, b, c


def split_schema(schema: JsonDict) -> None:
    """A split field's JSON schema: :data:`SPLIT_SCHEMA` (every item bounded, not tuple
    positions), its description and default kept."""
    schema.pop("prefixItems", None)
    schema.update(SPLIT_SCHEMA)


class AssemblyConfig(PromptLimits):
    """Tunables for budgeting, condensing, PPR bridging and stage inference (the window use
    and the decomposer's limits are :class:`~pipelines.prompt.tokens.PromptLimits`')."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # --- phase split ------------------------------------------------------
    split: tuple[float, float, float] = Field(
        default=DEFAULT_SPLIT,
        description="Shares of the context budget for (current stage, related prior "
        "context, stage summaries): non-negative, one at least positive, read as fractions "
        "of their sum ((3, 1, 0) is (0.75, 0.25, 0)).",
        json_schema_extra=split_schema,
    )

    # --- selection (Phase 1) ------------------------------------------------
    max_chunks_per_phase: int = Field(default=5, ge=1)
    oversample: int = Field(default=3, ge=1, description="Candidates fetched = chunks x this.")
    mmr_lambda: float = Field(default=0.5, ge=0.0, le=1.0)
    long_memory_chunks: int = Field(
        default=1,
        ge=1,
        le=10,
        description="Chunks a long memory (one indexed as chunks) shows: its best matching "
        "ones for the query, else its first, with a marker of what was left out.",
    )

    # --- PPR (Phase 2) ------------------------------------------------------
    ppr_damping: float = Field(default=0.85, gt=0.0, lt=1.0)
    ppr_max_iterations: int = Field(
        default=100,
        ge=1,
        description="Deviation: the seed used 30, which with damping 0.85 can stop ~0.8 % "
        "from the fixed point; 100 with the tolerance below converges in practice.",
    )
    ppr_tolerance: float = Field(
        default=1e-5,
        gt=0.0,
        description="GDS stops iterating when no score changes by more than this. 1e-5 "
        "takes half the iterations of 1e-6; on the 100,000-memory benchmark space the top 10 "
        "entities were the same in every walk and the top 50 overlapped 99.9 %.",
    )
    ppr_top_entities: int = Field(
        default=50, ge=1, description="Entities kept from the PPR ranking."
    )

    # --- density gate -------------------------------------------------------
    density_cache_ttl_s: float = Field(
        default=30.0,
        ge=0.0,
        description="How long an Assembler reuses a space's density counts (seconds; 0 = "
        "count on every request). Counting reads every memory's status (~80 ms at 100,000 "
        "memories); a gate decision a few seconds stale is harmless. Never cached with as_of.",
    )
    density_min_memories_per_dimension: float = Field(
        default=2.0,
        ge=0.0,
        description="Corpus density rho = memories / embedding dimensions. Below this the "
        "assembler falls back to flat recall: the design notes measured stage scoping net-flat "
        "to harmful at rho ~0.24 and clearly helpful at rho ~19.5, with the crossover somewhere "
        "above 1; 2.0 (768 memories at 384 dimensions) is a prior to calibrate.",
    )
    density_min_memories_per_stage: float = Field(
        default=10.0,
        ge=0.0,
        description="Below this mean number of memories per stage the assembler falls back "
        "to flat recall (stages of a handful of memories have nothing to scope).",
    )
    density_min_stages: int = Field(default=2, ge=1)

    # --- stage inference ----------------------------------------------------
    stage_tie_margin: float = Field(
        default=0.01,
        ge=0.0,
        description="Stages whose vote is within this share of the best are tied; the most "
        "recent of them wins.",
    )

    flat_stage_provenance: bool = Field(
        default=False,
        description="Whether flat mode's memory records name their stage ([when | stage] lines). "
        "Flat mode is chosen when stages carry no scoping signal (density gate), and time-gap "
        "stages are named by their start time, which the record's time already shows: the "
        "label would cost about 6 tokens per group of memories for nothing. Staged mode always "
        "names the stage (in the section header for the current stage, per group elsewhere).",
    )

    record_time_precision: Literal["auto", "minute", "date"] = Field(
        default="auto",
        description="How a memory record shows its time: 'minute' (YYYY-MM-DD HH:MM), "
        "'date' (YYYY-MM-DD), or 'auto': the time of day only on dates whose candidate "
        "records differ in it, where it orders that day's records; elsewhere the date says "
        "as much and saves about 2 tokens per record.",
    )

    flat_summaries_share: float = Field(
        default=0.25,
        ge=0.0,
        le=0.9,
        description="Share of a flat context's room that stage summaries may take when the "
        "query asks for a summary (intent 'summarization'): the question spans the whole "
        "history, which no handful of recalled turns covers. Most recent stages first, shown "
        "in time order; 0 keeps flat mode to recalled memories only.",
    )
    flat_summary_floor: float = Field(
        default=0.5,
        ge=0.0,
        le=0.9,
        description="When no stage summary fits a summary question's share "
        "('flat_summaries_share'), the most recent one that fits this share of the room is "
        "shown: a small window still gets one summary of the history before its records.",
    )
    compact_share: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="When flat mode's recalled memories do not all fit whole, the share of its "
        "room kept for compact records (pipelines.assemble.compact): whole records of the best "
        "ranked memories fill the rest, then memories further down show their best matching "
        "sentence. 0 shows whole records only.",
    )
    coverage_compact_share: float = Field(
        default=0.75,
        ge=0.0,
        le=1.0,
        description="'compact_share' for a question that asks for an order of events or a "
        "summary (intents 'event_order', 'summarization'): its answer is spread over the "
        "history, so more memories, each by its best sentence, serve it better than a few "
        "whole ones.",
    )
    compact_record_tokens: int = Field(
        default=30,
        ge=8,
        description="Tokens a compact record's text may use (its time and speaker come on top).",
    )
    facts_share: float = Field(
        default=0.1,
        ge=0.0,
        le=0.5,
        description="Share of a context's room (flat or staged) that atomic facts "
        "(pipelines.assemble.facts) may take: the facts closest to the query whose turns the "
        "other sections do not show, in a section of their own before them, each naming its "
        "turn. What they leave goes to the other sections. 0 leaves facts out.",
    )
    facts_k: int = Field(
        default=64,
        ge=0,
        le=1000,
        description="Facts read per context (the closest to the query), before choosing those "
        "that fit 'facts_share'.",
    )
    facts_standing_k: int = Field(
        default=16,
        ge=0,
        le=200,
        description="The space's standing statements (its active instruction and preference "
        "facts, closest to the query first, at most this many) lead the facts tier, whatever "
        "the query: an instruction governs every answer it applies to, and the query seldom "
        "shares its words. 0: standing statements compete with the other facts.",
    )
    facts_standing_min_similarity: float = Field(
        default=0.1,
        ge=-1.0,
        le=1.0,
        description="The cosine with the query (the statement's or its condition's) a "
        "standing statement needs to lead the facts tier; -1: every one does. 0.1 keeps 74 "
        "of the 77 (question, statement) pairs of BEAM-100K whose statement is evidence and "
        "drops three quarters of LoCoMo's statements, mostly turns of phrase taken for "
        "instructions ('Never say never'), while keeping 14 of its 20 evidence pairs.",
    )
    facts_per_memory: int = Field(
        default=1,
        ge=1,
        description="Facts shown per turn at most: the tier covers many turns, one clause each.",
    )
    facts_exact_max: int = Field(
        default=20_000,
        ge=0,
        description="A space with at most this many facts is scanned exactly; a larger one is "
        "searched through the fact_embedding vector index (over-fetched, post-filtered).",
    )
    flat_pool_factor: float = Field(
        default=4.0,
        ge=1.0,
        description="Flat mode recalls this many times as many memories as its budget holds "
        "at expected_item_tokens each, so first-fit packing can fill the room a long memory "
        "leaves with shorter ones further down the ranking (capped by recall's max_k).",
    )

    # --- service -------------------------------------------------------------
    expected_item_tokens: int = Field(
        default=60,
        ge=1,
        description="Tokens one rendered memory block is expected to take; sizes candidate "
        "pools (how many items a phase budget may hold), never the selection itself.",
    )
    stage_inference_hits: int = Field(
        default=20,
        ge=1,
        description="Recalled hits over the whole space used as evidence "
        "when the current stage is inferred from the query.",
    )
    stage_vote_rank_constant: int = Field(
        default=5,
        ge=0,
        description="Stage inference by rank votes: a recalled hit at rank r (1-based) gives "
        "its stage 1 / (constant + r); small constants trust the head of the ranking.",
    )
    stage_vote_weight_hits: float = Field(
        default=1.0, ge=0.0, description="Weight of the recalled hits' votes."
    )
    stage_vote_weight_summaries: float = Field(
        default=0.5,
        ge=0.0,
        description="Weight of the stages ranked by the query's similarity to their schema "
        "summary (only stages whose summary is built take part).",
    )
    stage_confidence_floor: float = Field(
        default=0.2,
        ge=0.0,
        le=1.0,
        description="An inferred stage's confidence is its relative vote margin over the "
        "runner-up, (best - second) / best. At or below this floor the current stage keeps "
        "only its minimum items and its budget share goes to related context (Phase 2).",
    )
    stage_confidence_full: float = Field(
        default=0.6,
        gt=0.0,
        le=1.0,
        description="Relative vote margin from which an inferred stage gets its full share; "
        "in between the share scales linearly. A stage the caller names always gets it.",
    )
    inferred_stage_min_tokens: int | None = Field(
        default=800,
        ge=0,
        description="Budget gate: when the current stage would be inferred (the caller names "
        "none) and the context sections have fewer tokens than this, the context is assembled "
        "in flat mode and the report says why: a small budget cannot afford three sections "
        "scoped to an inferred stage. On LoCoMo's scale setting (1,982 questions) the staged "
        "context held a gold turn for 1,446 / 1,609 / 1,687 questions at windows of 500 / "
        "750 / 1,000 tokens (about 450 / 700 / 950 section tokens) against 1,519 / 1,619 / "
        "1,663 in flat mode: 800 sits between the last loss and the first win. A stage the "
        "caller names is always used. None: no budget gate.",
    )
    flat_below_confidence: float | None = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="Confidence gate: when the current stage is inferred (not named by the "
        "caller) and its confidence is at or below this, no stage stands out from the query, "
        "so the context is assembled in flat mode (whole-space recall packed into the budget) "
        "and the report says why. With the default 0 this is exactly when the vote margin is "
        "at or below stage_confidence_floor, or no stage was found. A wrongly inferred stage "
        "costs its section, the per-record stage labels and a PageRank walk from the wrong "
        "place. None: always staged.",
    )
    related_ppr_by_confidence: bool = Field(
        default=True,
        description="Scale related_ppr_weight by the current stage's confidence (1 for a stage "
        "the caller names): PageRank is seeded from that stage's memories, so a walk from a "
        "weakly inferred stage is as uncertain as the stage (0: no walk). Not applied when "
        "related_recall_weight is 0, where PPR is the only ranking.",
    )
    related_ppr_weight: float = Field(
        default=0.5,
        ge=0.0,
        description="Phase 2 ranks other-stage memories by weighted reciprocal-rank fusion of "
        "their PPR mass (this weight) and their rank in whole-space recall "
        "(related_recall_weight). 0 here is recall only.",
    )
    related_recall_weight: float = Field(
        default=1.0,
        ge=0.0,
        description="See related_ppr_weight; 0 is the pure design: PPR mass alone.",
    )
    related_rank_constant: int = Field(default=10, ge=0, description="RRF constant of Phase 2.")
    max_summaries: int = Field(
        default=8, ge=0, description="Stage summaries built or read per request (Phase 3)."
    )
    expected_summary_tokens: int = Field(default=120, ge=1)
    ppr_concurrency: int = Field(default=1, ge=1, le=4, description="GDS concurrency (CE: <= 4).")
    ppr_parallel_runs: bool = Field(
        default=True,
        description="Run the single-seed-group PageRank walks as concurrent reads (one per "
        "group) instead of one after another in one statement. Each GDS call costs about 10 ms "
        "of fixed overhead on a graph of a few hundred entities, so a request with three seed "
        "groups waits for one walk instead of three; the combined masses are the same.",
    )
    ppr_memories_per_entity: int = Field(
        default=50,
        ge=1,
        description="Phase 2 reads at most this many memories per top-PageRank entity (the "
        "first its MENTIONS edges yield, not a ranking): bounds the query for entities "
        "mentioned thousands of times (it took 15 s at 100,000 memories unbounded; with 50 "
        "top entities, 200 per entity took 80 ms and 50 took 27 ms).",
    )
    ppr_entities_per_run: int = Field(
        default=200, ge=1, description="Top entities streamed back from each PageRank run."
    )
    query_priority: int = Field(
        default=0, description="Decomposer priority of the query slot (lower = kept longer)."
    )
    section_priorities: tuple[int, int, int] = Field(
        default=(1, 2, 3),
        description="Decomposer priorities of (current stage, related prior context, stage "
        "summaries).",
    )

    @field_validator("split")
    @classmethod
    def _split_shares(cls, value: tuple[float, float, float]) -> tuple[float, float, float]:
        return shares(value)


DEFAULT_ASSEMBLY_CONFIG = AssemblyConfig()
