"""Step ``echoes``: a turn that only restates the query as a question never outranks the turn
that answers it.

A conversation turn that only restates the query as a question ("Where do I live now?" for
"where does the user live?") matches the query best by its words, yet holds nothing the
query does not; the turn that answers it does. Among the first ``echoes.window`` of the
ranking, a conversation turn is an echo when it asks what the query asks in the query's own
words (:func:`is_echo`); its answer is the next turn of its conversation said by someone else
(as for step ``replies``), when that turn says something (:func:`is_answer`). The answer
takes the echo's place and score and the echo comes right after it
(:func:`promote_answers`); an answer outside the pool is read, passing the request's
filters. Runs before selection, so the pair is chosen from the new order; not for requests
at another time (``as_of``, ``known_at``).

:func:`content_stems` gives a text's content words (stop words out), crudely stemmed so
"live" / "lives" / "lived" / "living" meet.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from pipelines.ingest.text import match_tokens, split_sentences
from pipelines.language import current
from pipelines.recall.query import ends_with_question
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


_CLAUSE_BREAK = re.compile(r"[,;:\u2013\u2014]\s+|\s+-\s+")


def _stem(token: str) -> str:
    for suffix in current().talk.stem_suffixes:
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            token = token[: -len(suffix)]
            break
    return token[:-1] if len(token) > 3 and token.endswith("e") else token


def content_stems(text: str, ignore: frozenset[str] = frozenset()) -> set[str]:
    """The stems of ``text``'s content words: not stop words, not in ``ignore`` (case-folded
    names, e.g. the space's speakers), not one character."""
    return {
        _stem(t)
        for t in match_tokens(text)
        if len(t) > 1
        and t not in current().lexicon.stop_words
        and t not in ignore
        and not t.isdigit()
    }


@dataclass(frozen=True, slots=True)
class EchoCheck:
    """How much of a question turn the query covers."""

    question_share: float  # share of the question sentences' content stems in the query
    query_share: float  # share of the query's content stems in the question sentences
    other_words: int  # content stems of the turn's sentences that do not ask


def asked_part(sentence: str) -> tuple[str, str]:
    """A question sentence split into what it says before asking and the clause that asks:
    from the last clause opening with a question word or an auxiliary ("I keep forgetting,
    | where do you live now?"); the whole sentence when no clause opens so."""
    clauses = _CLAUSE_BREAK.split(sentence)
    for n in range(len(clauses) - 1, 0, -1):
        first = match_tokens(clauses[n])[:1]
        if first and first[0] in current().talk.question_words:
            return ", ".join(clauses[:n]), ", ".join(clauses[n:])
    return "", sentence


def echo_check(text: str, query_stems: set[str], ignore: frozenset[str] = frozenset()) -> EchoCheck:
    """Compare a turn that asks with the query (see :class:`EchoCheck`)."""
    sentences = split_sentences(text) or [text]
    asking: list[str] = []
    telling = [s for s in sentences if not ends_with_question(s)]
    for s in sentences:
        if ends_with_question(s):
            before, asks = asked_part(s)
            asking.append(asks)
            telling.append(before)
    asked = set().union(*(content_stems(s, ignore) for s in asking)) if asking else set()
    told = set().union(*(content_stems(s, ignore) for s in telling)) if telling else set()
    shared = asked & query_stems
    return EchoCheck(
        question_share=len(shared) / len(asked) if asked else 0.0,
        query_share=len(shared) / len(query_stems) if query_stems else 0.0,
        other_words=len(told - query_stems),
    )


def is_echo(
    text: str,
    query_stems: set[str],
    *,
    min_question_share: float,
    min_query_share: float,
    max_other_words: int,
    ignore: frozenset[str] = frozenset(),
) -> bool:
    """Whether a turn only restates the query: it ends by asking, most of what it asks is the
    query's words (``min_question_share``), it asks about most of the query
    (``min_query_share``), and what it says besides asking is short (``max_other_words``
    content words not in the query: "Oh nice! Where do you live now?")."""
    if not query_stems or not ends_with_question(text):
        return False
    check = echo_check(text, query_stems, ignore)
    return (
        check.question_share >= min_question_share
        and check.query_share >= min_query_share
        and check.other_words <= max_other_words
    )


def is_answer(text: str) -> bool:
    """Whether a reply says something: at least one sentence that does not ask."""
    return any(not ends_with_question(s) for s in split_sentences(text))


def promote_answers(
    ranking: Sequence[tuple[str, float]], answers: Mapping[str, str]
) -> list[tuple[str, float]]:
    """``ranking`` (ids with scores, best first) with the answer of each echo (``answers``:
    echo -> answer) in the echo's place, with its score, and the echo right after it with a
    score just below; an answer ranked above its echo already, or taken by a better echo,
    leaves the ranking as it is there. Answers not in ``ranking`` are added."""
    scores = dict(ranking)
    order = [item_id for item_id, _ in ranking]
    moved: set[str] = set()
    for echo, answer in answers.items():
        if answer in moved or echo in moved or echo not in scores or answer == echo:
            continue
        at = order.index(echo)
        if answer in scores and order.index(answer) < at:
            continue
        if answer in scores:
            order.remove(answer)
        score = scores[echo]
        order.insert(at, answer)
        scores[answer] = score
        scores[echo] = _just_below(score)
        moved |= {echo, answer}
    return [(item_id, scores[item_id]) for item_id in order]


def _just_below(score: float) -> float:
    return score - 1e-9 * max(1.0, abs(score))
