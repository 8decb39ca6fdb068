"""Step ``embed``: the query's embedding with the engine's model and, when a later step
uses late interaction, the query's token vectors from the same forward pass."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from pipelines.recall.config import SIGNAL_VECTOR
from pipelines.recall.state import Explanations, RecallState
from pipelines.recall.steps.base import RecallStep, StepContext


def needs_embedding(state: RecallState) -> bool:
    """Whether the query is embedded: for the vector signal, or for a later step."""
    return (
        state.plan.weights[SIGNAL_VECTOR] > 0.0
        or state.preset.needs_query_vector()
        or state.preset.needs_query_tokens()
    )


class Embed(RecallStep):
    kind: Literal["embed"] = "embed"
    requires = ("understand",)

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return needs_embedding(state)

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        texts = [state.plan.vector_text]
        with_tokens: Callable[[Sequence[str]], tuple[np.ndarray, list[Any]]] | None = getattr(
            ctx.embedder, "encode_with_tokens", None
        )
        if not state.preset.needs_query_tokens() or with_tokens is None:
            state.query_vector = ctx.embedder.encode(texts)[0]
            return None
        vectors, tokens = with_tokens(texts)
        state.query_vector, state.query_tokens = vectors[0], tokens[0]
        return None
