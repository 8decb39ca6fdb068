"""Steps ``exact_first`` and ``abstain`` in memory: memories holding a query identifier
verbatim head the results whatever the reordering before, and abstention never fires on them."""

from __future__ import annotations

from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.steps.abstain import Abstain
from pipelines.recall.steps.identifiers import ExactFirst, Identifiers
from tests.unit.recall_state import cand, ctx, plan, state

POOL = [cand(i) for i in ("a", "b", "c", "d", "e")]
RANKING = [("a", 5.0), ("b", 4.0), ("c", 3.0), ("d", 2.0), ("e", 1.0)]


def test_exact_hits_come_first_in_ranking_order_and_k_holds() -> None:
    s = state(POOL, RANKING, with_plan=plan(k=3, identifiers=("X1234",)))
    s.results = ["a", "b", "c"]  # what selection chose: the exact hits are not among them
    s.exact = {"e": ["X1234"], "d": ["X1234"]}
    ExactFirst().run(s, ctx())
    assert s.results == ["d", "e", "a"]


def test_without_a_selection_the_head_of_the_ranking_follows() -> None:
    s = state(POOL, RANKING, with_plan=plan(k=3, identifiers=("X1234",)))
    s.exact = {"c": ["X1234"]}
    ExactFirst().run(s, ctx())
    assert s.results == ["c", "a", "b"]


def test_the_steps_apply_only_with_identifiers_and_hits() -> None:
    s = state(POOL, RANKING)
    assert not Identifiers().applies(s, ctx()) and not ExactFirst().applies(s, ctx())
    s.plan_ = plan(identifiers=("X1234",), weights={**plan().weights, "fulltext": 0.0})
    assert not Identifiers().applies(s, ctx())  # no full-text signal (the dense preset)


def test_an_exact_hit_is_never_an_abstention() -> None:
    weak = [cand("a", text="nothing alike")]
    s = state(weak, [("a", 1.0)], with_plan=plan(keywords=["X1234"], fulltext="x1234"))
    s.pool["a"].raw["vector"] = 0.5  # cosine 0: no semantic evidence
    Abstain().run(s, ctx())
    assert s.abstention is not None and s.abstention.abstain
    s.exact = {"a": ["X1234"]}
    Abstain().run(s, ctx(DEFAULT_RECALL_CONFIG))
    assert s.abstention is not None and not s.abstention.abstain
    assert s.abstention.reason == "exact_identifier_match"


def test_selected_exact_hits_keep_the_selections_order() -> None:
    s = state(POOL, RANKING, with_plan=plan(k=4, identifiers=("X1234",)))
    s.results = ["a", "d", "b", "c"]  # MMR put d before b and c
    s.exact = {"c": ["X1234"], "d": ["X1234"], "e": ["X1234"]}
    ExactFirst().run(s, ctx())
    assert s.results == ["d", "c", "e", "a"]
