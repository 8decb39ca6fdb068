"""Step ``replies``: for a summary request, the reply to each of the best results comes
right after it.

"Summarize what we covered about X" asks for what was answered as much as for what was
asked, and the two read differently: the request names the topic in the asker's words, the
reply (often long, its own words) is what holds the substance. Recall finds the request; the
turn that answers it (the next turn of the conversation when someone else said it: another
role, or another speaker in a chat between people) joins the results right after it, with
the request's score (``selection.summary_replies`` of ``k`` requests each bring theirs).
Replies pass the request's filters like any candidate."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, TypeVar

import numpy as np

from pipelines.recall.intent import Intent
from pipelines.recall.state import Explanations, RecallState
from pipelines.recall.steps.base import RecallStep, StepContext
from pipelines.recall.steps.candidate_query import filter_params, merge, parse_candidates


class Replies(RecallStep):
    kind: Literal["replies"] = "replies"
    optional = True
    requires = ("fuse",)
    after = ("select", "embeddings")

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return (
            state.plan.intent is Intent.SUMMARIZATION
            and ctx.config.selection.summary_replies > 0.0
            and bool(state.order)
        )

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        results = state.final_ids()
        requests = results[: math.ceil(ctx.config.selection.summary_replies * state.plan.k)]
        rows = ctx.store.read(
            "recall/replies",
            space=ctx.space,
            ids=requests,
            with_embeddings=state.wants_embeddings,
            **filter_params(state.request),
        )
        merge(state.pool, parse_candidates(rows))
        replies = {r["request"]: r["id"] for r in rows}
        for r in rows:
            state.scores.setdefault(r["id"], state.scores[r["request"]])
            if r["embedding"] is not None and r["id"] not in state.embeddings:
                state.embeddings[r["id"]] = np.asarray(r["embedding"], dtype=np.float32)
        state.results = with_replies(results, replies, len(requests), state.plan.k)
        if not state.explaining:
            return None
        return {reply: {"replies_to": request} for request, reply in replies.items()}


T = TypeVar("T")


def with_replies(results: Sequence[T], replies: dict[T, T], requests: int, k: int) -> list[T]:
    """``results`` with the reply to each of its first ``requests`` items (``replies`` maps
    an item to the turn that answers it) placed right after that item, moved up if it is
    further down; cut to ``k``."""
    head = set(results[:requests])
    added = {replies[r] for r in head if r in replies}
    out: list[T] = []
    for item in results:
        if item in added and item not in out and item not in head:
            continue  # it comes after its request instead
        if item not in out:
            out.append(item)
        reply = replies.get(item)
        if item in head and reply is not None and reply not in out:
            out.append(reply)
    return out[:k]
