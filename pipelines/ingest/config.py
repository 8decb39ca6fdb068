"""Configuration for the pure parts of the write path.

Every knob of the ingest pipeline lives in one immutable tree of pydantic v2 models so that a
run can be described (and logged) as a single value:

* :class:`EntityConfig` — which spaCy labels become graph entities, length bounds, the alias
  table used by :func:`pipelines.ingest.entities.canonicalize`, spaCy batch size.
* :class:`GateConfig` — the encoding gate (novelty / salience / prediction error) and the
  near-duplicate merge thresholds. Disabled by default: bulk imports and benchmarks store every
  event verbatim, as in the source architecture.
* :class:`StageConfig` — stage detection (4 h time gap by default).
* :class:`FactConfig` — deterministic atomic fact extraction.
* :class:`IngestConfig` — aggregates the above plus request limits.

All models are frozen (and hashable: collections are tuples / frozensets), so a config can be
shared between threads and used as a cache key.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.config import JsonDict

from pipelines import session_documents

__all__ = [
    "DEFAULT_ENTITY_LABELS",
    "DEFAULT_INGEST_CONFIG",
    "EntityConfig",
    "FactConfig",
    "GateConfig",
    "IngestConfig",
    "StageConfig",
]

#: spaCy (OntoNotes) labels that make sense as graph entities. DATE, TIME, CARDINAL, ORDINAL,
#: QUANTITY, MONEY and PERCENT are deliberately absent: they are attributes of an event, not
#: things that should become shared hub nodes.
DEFAULT_ENTITY_LABELS: frozenset[str] = frozenset(
    {
        "PERSON",
        "ORG",
        "GPE",
        "LOC",
        "PRODUCT",
        "EVENT",
        "WORK_OF_ART",
        "FAC",
        "NORP",
        "LAW",
        "LANGUAGE",
    }
)

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def _pairs_schema(schema: JsonDict) -> None:
    """What :func:`_pairs` takes, in a JSON schema: ``[name, number]`` pairs or an object."""
    pairs: JsonDict = {k: schema.pop(k) for k in ("type", "items") if k in schema}
    schema["anyOf"] = [pairs, {"type": "object", "additionalProperties": {"type": "number"}}]


def _pairs(value: Any) -> Any:
    """Accept a mapping or an iterable of pairs; return a sorted tuple of pairs (hashable)."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), v) for k, v in value.items()))
    if isinstance(value, list | tuple | set | frozenset):
        return tuple(sorted(tuple(pair) for pair in value))
    return value  # let pydantic report the type error


class EntityConfig(BaseModel):
    """Entity extraction and canonicalisation settings."""

    model_config = _FROZEN

    keep_labels: frozenset[str] = DEFAULT_ENTITY_LABELS
    """spaCy labels kept as entities; everything else is discarded."""
    extract_technical_terms: bool = True
    """Add rule-based technical terms (CamelCase, snake_case, paths, versions, quoted names)."""
    min_chars: int = Field(default=2, ge=1)
    """Minimum length of the canonical key (single characters are never entities)."""
    max_chars: int = Field(default=80, ge=2)
    """Maximum length of the canonical key."""
    max_words: int = Field(default=8, ge=1)
    """Maximum number of words of an entity name."""
    aliases: tuple[tuple[str, str], ...] = (
        ("NYC", "New York City"),
        ("U.K.", "United Kingdom"),
        ("U.S.", "United States"),
        ("U.S.A.", "United States"),
        ("UK", "United Kingdom"),
        ("USA", "United States"),
    )
    """Alias -> canonical name. Both sides are canonicalised before lookup, so entries can be
    written naturally. Keep it small and unambiguous: an alias merges two keys for good."""
    batch_size: int = Field(default=128, ge=1)
    """``nlp.pipe`` batch size."""
    segment_chars: int = Field(default=20_000, ge=1_000)
    """Texts longer than this are read for entities in segments of at most this many
    characters, cut at paragraph or line breaks."""
    pipe_chars: int = Field(default=200_000, ge=1_000)
    """At most this many characters go through ``nlp.pipe`` at once (with at most
    ``batch_size`` texts): spaCy's memory grows with the characters of a batch, so long
    texts run in smaller batches than short turns."""
    skip_code_blocks: bool = True
    """Do not read fenced code blocks for entities (pasted code is not a list of names)."""
    ner_sentences: bool = True
    """The recogniser reads only the sentences that may hold a name
    (:func:`pipelines.ingest.ner_filter.ner_ranges`); off: every text that may hold one,
    whole. Rule-based terms are found in the whole text either way."""
    first_sighting_labels: frozenset[str] = frozenset(
        {"PERSON", "GPE", "LOC", "NORP", "FAC", "EVENT"}
    )
    """NER labels kept as entities at their first sighting: names of people and places, which
    spaCy tags reliably in prose. Other candidates (identifiers, products, organisations; on
    technical text spaCy tags code words ORG or PRODUCT) must recur (``promote_at``)."""
    promote_at: int = Field(default=2, ge=1)
    """Memories of the space a candidate must be seen in to become an entity (1: every
    candidate at once). See :mod:`pipelines.ingest.entity_graph`."""
    max_paired: int = Field(default=6, ge=2)
    """Most salient entities of a memory that get co-occurrence edges with each other: at most
    ``max_paired·(max_paired-1)/2`` pairs per memory (15 by default)."""
    max_candidates: int = Field(default=50_000, ge=0)
    """Entity candidates kept per space (seen once, waiting for a second sighting); the
    oldest are dropped beyond it."""

    @field_validator("aliases", mode="before")
    @classmethod
    def _alias_pairs(cls, value: Any) -> Any:
        return _pairs(value)


class GateConfig(BaseModel):
    """Encoding gate: admit / merge / reject incoming events.

    The admission score is the weighted mean
    ``(wn*novelty + ws*salience + wp*prediction_error) / (wn + ws + wp)`` (1 when the weights
    of the signals present are all 0: only the floors then reject) compared with
    ``threshold + category_offset``. Defaults follow the production values of the source
    architecture (0.25 / 0.20 / 0.30, threshold 0.30, salience floor 0.10).
    """

    model_config = _FROZEN

    enabled: bool = False
    """Off by default: bulk imports store everything verbatim (signals are still reported)."""
    novelty_weight: float = Field(default=0.25, ge=0.0)
    salience_weight: float = Field(default=0.20, ge=0.0)
    prediction_error_weight: float = Field(default=0.30, ge=0.0)
    threshold: float = Field(default=0.30, ge=0.0, le=1.0)
    """Minimum weighted score for admission."""
    salience_floor: float = Field(default=0.10, ge=0.0, le=1.0)
    """Events below this salience are rejected whatever their score (off-topic noise)."""
    novelty_floor: float = Field(default=0.0, ge=0.0, le=1.0)
    """Events below this novelty are rejected as redundant (0 disables the check)."""
    prediction_error_bypass: float = Field(default=0.65, ge=0.0, le=1.0)
    """Events at least this surprising are admitted whatever their score (1 disables)."""
    category_offsets: tuple[tuple[str, float], ...] = Field(
        default=(("correction", -0.06), ("decision", -0.04), ("relationship", -0.04)),
        json_schema_extra=_pairs_schema,
    )
    """Per-category threshold offsets; negative lowers the bar for high-value categories."""
    merge_similarity: float = Field(default=0.92, ge=0.0, le=1.0)
    """Cosine similarity at or above which a candidate may be a near-duplicate."""
    merge_lexical: float = Field(default=0.6, ge=0.0, le=1.0)
    """Content-token Jaccard similarity also required for a near-duplicate (no over-merging)."""
    novelty_context_chars: int = Field(default=30_000, ge=0)
    """Context kept for the compression novelty (deflate's window is 32 KiB)."""
    compression_level: int = Field(default=6, ge=1, le=9)

    @field_validator("category_offsets", mode="before")
    @classmethod
    def _offset_pairs(cls, value: Any) -> Any:
        return _pairs(value)

    def offset_for(self, category: str | None) -> float:
        """Threshold offset of ``category`` (0 for unknown or missing categories)."""
        if category is None:
            return 0.0
        return dict(self.category_offsets).get(category.casefold(), 0.0)


class StageConfig(BaseModel):
    """Stage (work-session) detection."""

    model_config = _FROZEN

    time_gap: timedelta = timedelta(hours=4)
    """A gap longer than this between sessions starts a new stage."""
    fallback_label: str = "default"
    """Stage label used by the explicit detector for sessions without a label."""

    @field_validator("time_gap")
    @classmethod
    def _positive_gap(cls, value: timedelta) -> timedelta:
        if value < timedelta(0):
            raise ValueError("time_gap must not be negative")
        return value


class FactConfig(BaseModel):
    """Deterministic atomic fact extraction."""

    model_config = _FROZEN

    enabled: bool = True
    user_roles: frozenset[str] = frozenset({"user", "human"})
    """Roles whose turns can be credited with decisions (compared case-insensitively)."""
    assistant_decisions_as_provisional: bool = True
    """Decision language on a non-user turn becomes ``provisional`` (else it is dropped)."""
    max_words: int = Field(default=25, ge=3)
    """Units longer than this are cut at a word boundary and marked with an ellipsis."""
    min_words: int = Field(default=2, ge=1)
    """Units shorter than this are not extracted."""
    min_standalone_words: int = Field(default=4, ge=1)
    """A fact (not a question) shorter than this is replaced by its sentence or dropped: it
    means nothing without its turn (:mod:`pipelines.ingest.fact_parse`)."""
    max_facts_per_text: int = Field(default=64, ge=1)
    embedded_categories: frozenset[str] = frozenset(
        {"decision", "constraint", "fact", "action_item", "provisional"}
    )
    """Categories whose facts get an embedding at ingest: context assembly recalls them as its
    compact tier (:mod:`pipelines.assemble.facts`). Questions are requests, not statements.
    Standing instructions and preferences are always embedded; a generic ``preference`` fact is
    not, since embedded preferences are the ones standing recall and supersession compare."""
    standing: bool = True
    """Extract standing instructions and preferences from user turns
    (:mod:`pipelines.ingest.standing`)."""
    restate_similarity: float = Field(default=0.85, ge=0.0, le=1.0)
    """A new standing statement at least this similar (cosine) to an active one of the same
    category and speaker restates it: the older is superseded."""
    change_similarity: float = Field(default=0.42, ge=0.0, le=1.0)
    """... at least this similar, and announcing a change ("now", "instead", "no longer") or
    flipping the polarity, replaces it. Calibrated on hand pairs with all-MiniLM-L6-v2:
    "I prefer SQLite for now" / "I prefer PostgreSQL now" 0.58, "I prefer tabs" / "I prefer
    spaces now" 0.45; unrelated preferences 0.21-0.43, and without a change marker those
    never supersede."""

    @field_validator("user_roles", mode="before")
    @classmethod
    def _casefold_roles(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list | tuple | set | frozenset):
            return frozenset(str(role).casefold() for role in value)
        return value


class IngestConfig(BaseModel):
    """Everything the pure write path needs, plus request limits."""

    model_config = _FROZEN

    entities: EntityConfig = EntityConfig()
    gate: GateConfig = GateConfig()
    stages: StageConfig = StageConfig()
    facts: FactConfig = FactConfig()
    max_content_chars: int = Field(default=4_000_000, ge=1)
    """Longest accepted memory content in characters (4 million: a large pasted file or
    document); longer content is refused with 422, never truncated. Content longer than the
    embedder's window is indexed as chunks (:mod:`pipelines.ingest.encode`)."""
    max_request_chars: int = Field(default=8_000_000, ge=1)
    """Most content characters in one request, all its items together (422 above it): one
    request is one transaction and is held in memory while it is encoded."""
    max_turns_per_request: int = Field(default=1_000, ge=1)
    max_embedding_inputs: int = Field(default=4_096, ge=1)
    """Most texts the embedding model may read for one request (one per new memory that fits
    its window, one per chunk of a longer one; counted from the chunk plan before any model
    runs): the work of a request, refused with a 422 naming where to split it above this.
    4,096 admits a 2 MB document of short blocks (3,716 chunks); on a loaded 2-core machine
    the model reads about 10 to 20 such texts per second."""
    embedding_batch_size: int = Field(default=64, ge=1)
    group_turns: int = Field(default=512, ge=1)
    """A multi-session call is computed and written in groups of whole sessions holding at
    least this many turns (the last may hold fewer), one transaction per group: big enough
    for the encoder's length-sorted batches and to spread a transaction's fixed cost, small
    enough that sessions are committed as the call goes on."""
    session_document_max_memories: int = Field(default=session_documents.DEFAULT_MAX_MEMORIES, ge=1)
    """A session's document (:mod:`pipelines.session_documents`) holds the texts of at most
    this many of its memories, the latest by event time."""
    embed_speaker: bool = True
    """Embed a turn as ``"<speaker>: <content>"`` (the stored text stays verbatim). Who said
    something is part of what it means: on LoCoMo, exact dense search over speaker-attributed
    turns finds the gold turn in the top 10 for 0.48 / 0.43 of the questions of the first two
    conversations, against 0.31 / 0.27 for the bare text (exact search, all-MiniLM-L6-v2)."""
    entity_vectors: bool = False
    """Keep each entity's vector, the mean embedding of the memories mentioning it
    (:mod:`pipelines.ingest.vectors`; no encoder work of its own), in the ``entity_embedding``
    index. Off: no read path queries it yet, and its upkeep is write work on every batch
    (with stage vectors, about a tenth of ingest's statement time on LoCoMo)."""
    stage_vectors: bool = False
    """Keep each stage's centroid, the mean embedding of its memories, in the
    ``stage_embedding`` index. Off for the same reason as ``entity_vectors``: stage inference
    votes for stages through recalled memories (``assemble.plan.vote_stages``), not by centroid."""
    token_vectors: bool = True
    """Store each new memory's late-interaction token vectors
    (:mod:`pipelines.models.late_interaction`), computed in the same forward pass as its
    embedding, for the ``late_interaction`` step of recall. About 2 KB per turn; memories
    stored without them (or in an older format) are filled in by the ``token_vectors``
    consolidation job, and recall treats a memory without them as unscored by that step."""


DEFAULT_INGEST_CONFIG = IngestConfig()
