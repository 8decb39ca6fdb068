"""The shape of a recall step, and what every step may use (:class:`StepContext`).

A step is a frozen pydantic model: its fields are the parameters a preset gives it, its
``run`` reads and extends the :class:`~pipelines.recall.state.RecallState`, and its tunables
come from its own section of :class:`~pipelines.recall.config.RecallConfig`. A step declares
the round trips it waits for (:class:`Read`, its ``reads``); the runner
(:mod:`pipelines.recall.runner`) starts each declared read as soon as the state holds its
inputs, calls the steps of a preset in order, and owns the deadline, the timings and the
explanations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

import numpy as np
from pydantic import BaseModel, ConfigDict

from pipelines.access_log import AccessLog
from pipelines.graph import GraphStore
from pipelines.models.token_cache import TokenCache
from pipelines.recall.config import RecallConfig
from pipelines.recall.state import Explanations, RecallState


class QueryEmbedder(Protocol):
    """What recall needs of an embedding model (:mod:`pipelines.models.embeddings`); one that
    also has ``encode_with_tokens`` gives late interaction its query token vectors."""

    @property
    def dimensions(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class Reranker(Protocol):
    """A cross-encoder (:class:`pipelines.models.reranker.FlashRankReranker`)."""

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


@dataclass(frozen=True)
class StepContext:
    """One recall's access to the outside world: its space, the configuration, the store,
    the models, and the executor for round trips sent ahead (None: none are)."""

    space: str
    config: RecallConfig
    store: GraphStore
    embedder: QueryEmbedder
    reranker: Reranker | None
    executor: Executor | None
    #: memories in the given stages (cached by the Recaller): the exact-scan choice
    stage_scope_size: Callable[[Sequence[str]], int]
    #: token vectors already read (the engine's cache; None: none kept)
    tokens: TokenCache | None = None
    #: where accesses are recorded for writing off the request path (None: not recorded)
    access: AccessLog | None = None


T = TypeVar("T")


@dataclass(frozen=True)
class Read(Generic[T]):
    """A round trip a step waits for. The runner starts it once ``ready`` (the state holds
    its inputs) and when ``wanted``: on the executor when there is one and
    ``candidates.concurrent_signals`` is on, else as a call the step makes when it waits.
    ``concurrent_only``: without the executor it is not read on its own (the step that
    waits reads it with its own round trip)."""

    name: str
    ready: Callable[[RecallState], bool]
    wanted: Callable[[RecallState, StepContext], bool]
    #: the round trip as a call (None: nothing to read for this state)
    call: Callable[[RecallState, StepContext], Callable[[], T] | None]
    concurrent_only: bool = False

    def result(self, state: RecallState) -> T | None:
        """What the read brought (waiting for it); None when it was not started."""
        pending = state.reads.get(self.name)
        return None if pending is None else cast(T, pending())

    def started(self, state: RecallState) -> bool:
        return self.name in state.reads


def after_understand(state: RecallState) -> bool:
    """Ready once the query is understood (the plan exists)."""
    return state.plan_ is not None


def after_embed(state: RecallState) -> bool:
    """Ready once the query is embedded."""
    return state.query_vector is not None


class RecallStep(BaseModel):
    """One step of a recall preset. Subclasses set ``kind`` (a literal: its name in the
    preset, the timings and the step order) and implement :meth:`run`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    #: Skipped once the request's deadline has passed (the response then says incomplete).
    optional: ClassVar[bool] = False
    #: Where its explanations go in a result's ``explain`` (None: the top level).
    explain_as: ClassVar[str | None] = None
    #: Steps that must come before it in a preset (when present there).
    after: ClassVar[tuple[str, ...]] = ()
    #: Steps that must be in the preset, before it.
    requires: ClassVar[tuple[str, ...]] = ()
    #: The round trips it waits for, started by the runner ahead of it.
    reads: ClassVar[tuple[Read[Any], ...]] = ()
    #: It reads the query's embedding / its late-interaction token vectors.
    needs_query_vector: ClassVar[bool] = False
    needs_query_tokens: ClassVar[bool] = False

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        """Whether the step has anything to do for this state (else it is not run, not
        timed, and a passed deadline does not count against it)."""
        return True

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        """Do the step; return what it says about each result when ``state.explaining``."""
        raise NotImplementedError
