"""Search as configuration: a preset *is* the ordered list of recall steps, each with its
parameters. The runner (:mod:`pipelines.recall.runner`) runs them in this order, which is
their logic only: the round trips a step waits for are declared by the step (its ``reads``)
and started by the runner as soon as their inputs exist, concurrently. How each step is
tuned is its section of :class:`~pipelines.recall.config.RecallConfig`.

The product presets (what a request can name, ``preset`` in the recall body):

* ``full`` (the default): understand the query (intent, speakers named in it, time
  expressions), embed (the embedding-free signals and the session-level search are read
  meanwhile, the standing statements beside the vector candidates), gather every signal's
  candidates (only those valid at ``as_of`` / ``known_at`` when asked), fuse them (weighted
  RRF, boosts, the question prior), look up the query's identifiers exactly (codes, ids,
  paths, versions), rerank, lift by session documents, late interaction for memories and for
  sessions, a question turn that restates the query put right below the turn that answers it
  (echoes), MMR selection with session novelty, the replies to a summary request's best
  results, a place for the best standing instruction or preference, time order for event-
  order questions (``order="auto"``) after the exact identifier matches are put first,
  abstention, touch.
* ``fast``: ``full`` without late interaction (at either level): no token vectors read.
* ``dense``: vector similarity only, for debugging.

Experiments (the benchmark's ablations) build other presets from the same steps
(``benchmarks/presets.py``) and hand them to :meth:`~pipelines.recall.service.Recaller.recall`.
"""

from __future__ import annotations

from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, model_validator

from pipelines.errors import InvalidInput
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG, SIGNAL_VECTOR, RecallConfig
from pipelines.recall.request import DEFAULT_PRESET, PresetName
from pipelines.recall.steps.abstain import Abstain
from pipelines.recall.steps.base import RecallStep
from pipelines.recall.steps.candidates import Candidates
from pipelines.recall.steps.chunks import ChunkCandidates
from pipelines.recall.steps.echoes import Echoes
from pipelines.recall.steps.embed import Embed
from pipelines.recall.steps.embeddings import Embeddings
from pipelines.recall.steps.fuse import Fuse
from pipelines.recall.steps.identifiers import ExactFirst, Identifiers
from pipelines.recall.steps.late_interaction import LateInteraction
from pipelines.recall.steps.order import Order
from pipelines.recall.steps.replies import Replies
from pipelines.recall.steps.rerank import Rerank
from pipelines.recall.steps.select import Select
from pipelines.recall.steps.session_documents import SessionDocuments
from pipelines.recall.steps.session_late_interaction import SessionLateInteraction
from pipelines.recall.steps.standing import Standing, StandingSlots
from pipelines.recall.steps.touch import Touch
from pipelines.recall.steps.understand import Understand
from pipelines.recall.steps.validity import Validity

#: Every preset has these steps.
ESSENTIAL_STEPS = ("understand", "candidates", "fuse")


class RecallPreset(BaseModel):
    """A named, ordered list of recall steps and the configuration they run with: the
    engine's :class:`~pipelines.recall.config.RecallConfig` with ``config`` (nested
    overrides, as :func:`~pipelines.overrides.merge_overrides` takes them) applied. Frozen;
    derive variants with :meth:`without` and :meth:`with_config`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str
    steps: tuple[SerializeAsAny[RecallStep], ...]
    config: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> RecallPreset:
        kinds = [s.kind for s in self.steps]
        if len(set(kinds)) != len(kinds):
            raise ValueError(f"steps must be unique, got {kinds}")
        missing = [k for k in ESSENTIAL_STEPS if k not in kinds]
        if missing:
            raise ValueError(f"a preset needs the steps {missing}")
        for n, step in enumerate(self.steps):
            before = set(kinds[:n])
            for kind in step.requires:
                if kind not in before:
                    raise ValueError(f"step {step.kind!r} needs {kind!r} before it")
            for kind in step.after:
                if kind in kinds and kind not in before:
                    raise ValueError(f"step {step.kind!r} must come after {kind!r}")
        reads = {r.name: r for s in self.steps for r in s.reads}
        clash = set(reads) & set(kinds)
        if clash:
            raise ValueError(f"reads and steps share the names {sorted(clash)} (their timings)")
        try:
            self.configured(DEFAULT_RECALL_CONFIG)
        except InvalidInput as exc:
            raise ValueError(f"{exc.field}: {exc}") from exc
        return self

    def configured(self, base: RecallConfig) -> RecallConfig:
        """``base`` with this preset's overrides (``base`` itself when it has none)."""
        return merge_overrides(base, self.config, "config") if self.config else base

    def has(self, kind: str) -> bool:
        return any(s.kind == kind for s in self.steps)

    def needs_query_vector(self) -> bool:
        return any(s.needs_query_vector for s in self.steps)

    def needs_query_tokens(self) -> bool:
        return any(s.needs_query_tokens for s in self.steps)

    def without(self, *kinds: str, name: str, description: str) -> RecallPreset:
        """This preset without the steps ``kinds``."""
        steps = tuple(s for s in self.steps if s.kind not in kinds)
        return RecallPreset(name=name, description=description, steps=steps, config=self.config)

    def with_config(
        self, overrides: dict[str, Any], *, name: str, description: str
    ) -> RecallPreset:
        """This preset with ``overrides`` merged into its configuration overrides."""
        return RecallPreset(
            name=name,
            description=description,
            steps=self.steps,
            config=_deep_merged(self.config, overrides),
        )


def _deep_merged(base: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``more`` applied, nested mappings key by key."""
    out = dict(base)
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merged(out[key], value)
        else:
            out[key] = value
    return out


FULL = RecallPreset(
    name="full",
    description="Every step: query understanding, fused signals, reranking, session "
    "documents, late interaction (memories and sessions), MMR selection with session "
    "novelty, a place for the best standing statement, time order for event-order questions.",
    steps=(
        Understand(),
        Embed(),
        Candidates(),
        Identifiers(),
        ChunkCandidates(),
        Standing(),
        Validity(),
        Fuse(),
        Rerank(),
        SessionDocuments(),
        LateInteraction(),
        SessionLateInteraction(),
        Embeddings(),
        Echoes(),
        Select(),
        Replies(),
        StandingSlots(),
        ExactFirst(),
        Order(),
        Abstain(),
        Touch(),
    ),
)
FAST = FULL.without(
    "late_interaction",
    "session_late_interaction",
    name="fast",
    description="full without late interaction (memories and sessions): no token vectors read.",
)


#: What the simple presets leave out of the query's understanding and the fusion: time
#: expressions, the speakers the query names, the question prior, event order on ``auto``.
SIMPLE_CONFIG: dict[str, Any] = {
    "query": {"time_expressions": False, "speakers": False},
    "fusion": {"question_turn_factor": 1.0},
    "order": {"event_order": False},
}


def simple_preset(
    name: str, description: str, config: dict[str, Any], *extra: RecallStep
) -> RecallPreset:
    """A preset without the session, late-interaction and selection steps: the query's
    candidates fused, then ``extra`` steps (a reranker), time order on request, abstention;
    :data:`SIMPLE_CONFIG` with ``config`` over it."""
    return RecallPreset(
        name=name,
        description=description,
        config=_deep_merged(SIMPLE_CONFIG, config),
        steps=(
            Understand(),
            Embed(),
            Candidates(),
            Identifiers(),
            ChunkCandidates(),
            Validity(),
            Fuse(),
            *extra,
            Embeddings(),
            ExactFirst(),
            Order(),
            Abstain(),
            Touch(),
        ),
    )


DENSE = simple_preset(
    "dense",
    "Vector similarity only (for debugging).",
    {"query": {"signals": [SIGNAL_VECTOR], "intent_profiles": False}},
)

#: The presets a request can name.
PRESETS: dict[str, RecallPreset] = {p.name: p for p in (FULL, FAST, DENSE)}
assert set(PRESETS) == set(get_args(PresetName)) and DEFAULT_PRESET in PRESETS
