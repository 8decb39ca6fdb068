"""Step ``select``: greedy MMR over the oversampled head of the ranking, optionally with
session novelty: a candidate whose conversation session already has a pick is charged once,
so the results cover more conversations.

:func:`mmr_select` (pure) is greedy Maximal Marginal Relevance (Carbonell & Goldstein, 1998)
over a ranking retrieved wider than ``k``: it picks ``k`` items that are relevant *and* not
redundant with each other, optionally charging an item whose group (its conversation
session) already has a pick. Selection is by count only: token budgets are enforced later,
at context assembly, so a few long memories can never shrink the selected set.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np

from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.state import Explanations, RecallState, session_scope
from pipelines.recall.steps.base import RecallStep, StepContext
from pipelines.recall.steps.session_documents import pool_resolution


class Select(RecallStep):
    kind: Literal["select"] = "select"
    optional = True
    explain_as = "selection"
    requires = ("embeddings",)

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return bool(state.order)

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        cfg = ctx.config.selection
        head = state.order[: state.plan.pool]
        dims = ctx.embedder.dimensions
        matrix = np.zeros((len(head), dims), dtype=np.float64)
        for row, item_id in enumerate(head):
            emb = state.embeddings.get(item_id)
            if emb is not None and emb.shape == (dims,):
                matrix[row] = emb
        novelty = session_novelty(state, cfg.session_novelty)
        if novelty > 0.0 and cfg.novelty_by_resolution:
            novelty *= pool_resolution(state, ctx.config)
        picks = mmr_select(
            head,
            [state.scores[i] for i in head],
            matrix,
            state.plan.k,
            cfg.mmr_lambda,
            groups=[state.pool[i].session_id for i in head] if novelty > 0.0 else None,
            group_penalty=novelty,
        )
        state.results = [p.id for p in picks]
        notes: dict[str, dict[str, Any]] = {}
        if state.explaining:
            for p in picks:
                notes[p.id] = {
                    "relevance": p.relevance,
                    "penalty": p.penalty,
                    "session_penalty": p.group_penalty,
                    "gain": p.gain,
                    "rank": p.rank,
                }
        return notes


def session_novelty(state: RecallState, default: float) -> float:
    """The session novelty charged for this request: the request's own, else ``default``
    (``selection.session_novelty``), for requests across sessions only
    (:func:`~pipelines.recall.state.session_scope`); 0: none."""
    if not session_scope(state.request):
        return 0.0
    own = state.request.session_novelty
    return default if own is None else own


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SelectedItem:
    """One MMR pick.

    ``relevance`` is the normalised relevance in [0, 1]; ``penalty`` the maximum cosine
    similarity to the items picked before it, floored at 0 (0.0 for the first pick); ``gain`` is
    ``relevance − λ·penalty − group_penalty``; ``group_penalty`` is the novelty term (μ when
    an item of the same group, e.g. the same conversation session, was picked before it, else
    0); ``rank`` is the 1-based pick order.
    """

    id: str
    relevance: float
    penalty: float
    gain: float
    rank: int
    group_penalty: float = 0.0


def _normalise_relevance(relevance: np.ndarray) -> np.ndarray:
    low, high = float(relevance.min()), float(relevance.max())
    if high == low:
        return np.ones_like(relevance)
    return (relevance - low) / (high - low)


def _unit_rows(embeddings: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
    safe = np.where(norms > 0.0, norms, 1.0)
    return embeddings / safe


def _checked(
    ids: Sequence[str],
    relevance: Sequence[float],
    embeddings: np.ndarray,
    k: int,
    lambda_: float,
    groups: Sequence[Hashable | None] | None,
    group_penalty: float,
) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`mmr_select`'s inputs as arrays (relevance, embeddings), None when nothing is to
    be picked; ValueError for invalid ones."""
    n = len(ids)
    if len(relevance) != n:
        raise ValueError("ids and relevance must have the same length")
    if groups is not None and len(groups) != n:
        raise ValueError("ids and groups must have the same length")
    if not math.isfinite(group_penalty) or group_penalty < 0.0:
        raise ValueError("group_penalty must be finite and >= 0")
    if k < 0:
        raise ValueError("k must be >= 0")
    if not 0.0 <= lambda_ <= 1.0:
        raise ValueError("lambda_ must be in [0, 1]")
    if len(set(ids)) != n:
        raise ValueError("ids must be unique")
    if n == 0 or k == 0:
        return None
    matrix = np.asarray(embeddings, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != n:
        raise ValueError("embeddings must have shape (len(ids), d)")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("embeddings must be finite")
    rel = np.asarray(relevance, dtype=np.float64)
    if not np.all(np.isfinite(rel)):
        raise ValueError("relevance must be finite")

    return rel, matrix


def mmr_select(
    ids: Sequence[str],
    relevance: Sequence[float],
    embeddings: np.ndarray,
    k: int,
    lambda_: float = DEFAULT_RECALL_CONFIG.selection.mmr_lambda,
    groups: Sequence[Hashable | None] | None = None,
    group_penalty: float = 0.0,
) -> list[SelectedItem]:
    """Greedy MMR: repeatedly pick ``argmax relevance_i − λ · max_{j∈S} cos(e_i, e_j)
    − μ · [group_i ∈ groups(S)]``.

    Relevance is min-max normalised to [0, 1] first (a constant list becomes all 1.0) so
    that λ has the same meaning whatever the scale of the upstream score (RRF scores are
    ~0.01–0.1, reranker logits are unbounded). The least relevant candidate thus gets
    relevance 0, which is why MMR should run on an oversampled pool
    (``k × mmr_oversample``), not on exactly the items one hopes to keep.

    Embeddings may have any norm: rows are L2-normalised here, and an all-zero row (no
    embedding) has similarity 0 to everything, so it is never penalised. The penalty is
    ``max(0, max cosine)``: an anti-correlated item counts as unrelated rather than being
    rewarded, which keeps successive greedy gains non-increasing. Cost is O(k·n·d): the
    running penalty vector is updated with one matrix-vector product per pick.

    Ties on gain are broken by lower penalty (less redundant, only when ``λ > 0``), then
    by input order, which is normally the upstream rank. With ``λ = 0`` and ``μ = 0`` the
    result is exactly the stable top-``k`` by relevance. Returns ``min(k, n)`` distinct items
    in pick order.

    ``groups`` (one label per item, None for none) adds a novelty term: an item whose group
    already has a pick loses ``μ = group_penalty`` once (coverage of groups is submodular).
    Recall groups by conversation session: when the first guess of the session is wrong,
    the best turn of the second-best session is worth more than the second-best turn of
    the best one.

    Raises:
        ValueError: on mismatched lengths, non-finite relevance, duplicate ids, ``k < 0``,
            ``λ`` outside [0, 1] or ``μ`` negative or not finite.
    """
    checked = _checked(ids, relevance, embeddings, k, lambda_, groups, group_penalty)
    if checked is None:
        return []
    rel, matrix = checked
    codes = _group_codes(groups) if groups is not None and group_penalty > 0.0 else None
    return _greedy(
        ids, _normalise_relevance(rel), _unit_rows(matrix), k, lambda_, codes, group_penalty
    )


def _group_codes(groups: Sequence[Hashable | None]) -> np.ndarray:
    """Groups as integer codes (-1: none), so a pick marks its whole group in one step."""
    index: dict[Hashable, int] = {}
    return np.array([-1 if g is None else index.setdefault(g, len(index)) for g in groups])


def _greedy(
    ids: Sequence[str],
    rel: np.ndarray,
    unit: np.ndarray,
    k: int,
    lambda_: float,
    codes: np.ndarray | None,
    group_penalty: float,
) -> list[SelectedItem]:
    """:func:`mmr_select`'s picks over checked inputs: normalised relevance, unit rows."""
    n = len(ids)
    penalty = np.zeros(n)  # max(0, max cosine) to the picks so far
    novelty = np.zeros(n)  # μ once the item's group has a pick
    chosen = np.zeros(n, dtype=bool)
    picks: list[SelectedItem] = []
    for rank in range(1, min(k, n) + 1):
        gain = rel - lambda_ * penalty - novelty
        gain[chosen] = -np.inf
        best_gain = gain.max()
        tied = np.flatnonzero(gain == best_gain)
        if tied.size > 1 and lambda_ > 0.0:
            best = int(tied[np.argmin(penalty[tied])])
        else:
            best = int(tied[0])
        picks.append(
            SelectedItem(
                id=ids[best],
                relevance=float(rel[best]),
                penalty=float(penalty[best]),
                gain=float(best_gain),
                rank=rank,
                group_penalty=float(novelty[best]),
            )
        )
        chosen[best] = True
        if codes is not None and codes[best] >= 0:
            novelty[codes == codes[best]] = group_penalty
        penalty = np.maximum(penalty, np.clip(unit @ unit[best], 0.0, 1.0))
    return picks
