"""Step ``echoes``: a turn that only restates the query as a question never outranks the turn
that answers it.

Among the first ``echoes.window`` of the ranking, a conversation turn is an echo when it
asks what the query asks in the query's own words (:func:`~pipelines.recall.echoes.is_echo`);
its answer is the next turn of its conversation said by someone else (as for step
``replies``), when that turn says something. The answer takes the echo's place and score and
the echo comes right after it (:func:`~pipelines.recall.echoes.promote_answers`); an answer
outside the pool is read, passing the request's filters. Runs before selection, so the pair
is chosen from the new order; not for requests at another time (``as_of``, ``known_at``)."""

from __future__ import annotations

from typing import Literal

import numpy as np

from pipelines.recall.echoes import content_stems, is_answer, is_echo, promote_answers
from pipelines.recall.state import Explanations, RecallState
from pipelines.recall.steps.base import RecallStep, StepContext
from pipelines.recall.steps.candidate_query import filter_params, merge, parse_candidates


class Echoes(RecallStep):
    kind: Literal["echoes"] = "echoes"
    optional = True
    explain_as = "echo"
    requires = ("fuse",)
    after = (
        "rerank",
        "session_documents",
        "late_interaction",
        "session_late_interaction",
        "embeddings",
    )

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return ctx.config.echoes.window > 0 and bool(state.order) and not state.request.time_travel

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        cfg = ctx.config.echoes
        names = frozenset(
            w for n in (*state.profile.speakers, *state.profile.forms) for w in n.casefold().split()
        )
        query = content_stems(state.plan.content, names)
        echoes = [
            i
            for i in state.order[: cfg.window]
            if state.pool[i].kind == "turn"
            and is_echo(
                state.pool[i].text,
                query,
                min_question_share=cfg.min_question_share,
                min_query_share=cfg.min_query_share,
                max_other_words=cfg.max_other_words,
                ignore=names,
            )
        ]
        if not echoes:
            return None
        rows = ctx.store.read(
            "recall/replies",
            space=ctx.space,
            ids=echoes,
            with_embeddings=state.wants_embeddings,
            **filter_params(state.request),
        )
        rows = [r for r in rows if is_answer(r["text"] or "")]
        merge(state.pool, parse_candidates(rows))
        for r in rows:
            if r["embedding"] is not None and r["id"] not in state.embeddings:
                state.embeddings[r["id"]] = np.asarray(r["embedding"], dtype=np.float32)
        by_echo = {r["request"]: r["id"] for r in rows}
        answers = {e: by_echo[e] for e in echoes if e in by_echo}
        before = list(state.order)
        state.set_ranking(promote_answers([(i, state.scores[i]) for i in before], answers))
        if not state.explaining:
            return None
        notes: Explanations = {}
        for echo, answer in answers.items():
            if state.order.index(answer) < state.order.index(echo):
                notes[echo] = {"echo_of_query": True, "answered_by": answer}
                notes[answer] = {"answers_echo": echo}
        return notes
