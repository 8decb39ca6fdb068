"""Step ``understand`` on in-memory requests: the plan."""

from __future__ import annotations

from datetime import UTC, datetime

from pipelines.recall.config import DEFAULT_RECALL_CONFIG, QueryConfig, RecallConfig
from pipelines.recall.intent import Intent
from pipelines.recall.presets import DENSE, FULL, SIMPLE_CONFIG
from pipelines.recall.request import RecallRequest
from pipelines.recall.state import RecallState, SpaceProfile
from pipelines.recall.steps.understand import Understand, entity_keys, plan, vector_text
from tests.unit.recall_state import ctx

PROFILE = SpaceProfile(size=100, total=1000, speakers=("Ann", "Bob"))
CFG = DEFAULT_RECALL_CONFIG  # the full preset's
SIMPLE = FULL.with_config(SIMPLE_CONFIG, name="simple", description="d").configured(CFG)


def _plan(config: RecallConfig, query: str, **request: object):
    return plan(RecallRequest(query=query, **request), PROFILE, config)


def test_the_plan_of_full() -> None:
    now = datetime(2023, 7, 1, tzinfo=UTC)
    p = _plan(CFG, "What did Ann say about Paris in May 2023?", now=now)
    assert p.query_speakers == ["Ann"]
    assert "Ann" not in p.content and "Paris" in p.content
    assert p.vector_text == p.content  # speakers stripped from the embedded text too
    assert p.windows and p.windows[0].start == datetime(2023, 5, 1, tzinfo=UTC)
    assert p.fulltext and "paris" in p.fulltext.lower() and "ann" not in p.fulltext.lower()
    assert "paris" in p.entity_keys and "ann" not in p.entity_keys  # speakers are no seeds
    assert p.weights == CFG.weights_for(p.intent) and p.now == now
    assert (p.k, p.pool) == (10, 50)  # k x oversample 3, at least min_pool 50


def test_signals_outside_the_step_weigh_nothing() -> None:
    p = _plan(DENSE.configured(CFG), "What did Ann say about Paris?")
    assert p.weights["vector"] > 0 and all(w == 0 for s, w in p.weights.items() if s != "vector")
    assert p.fulltext is None and p.entity_keys == []
    semantic = CFG.weights_for(Intent.SEMANTIC)["vector"]
    assert p.weights["vector"] == semantic  # the balanced profile, whatever the intent


def test_without_speakers_or_time_expressions() -> None:
    p = _plan(SIMPLE, "What did Ann say about Paris in May 2023?")
    assert p.query_speakers == [] and p.content == p.query and p.windows == []


def test_the_pool_follows_the_request() -> None:
    assert _plan(CFG, "q", k=40).pool == 120
    assert _plan(CFG, "q", k=10, oversample=12).pool == 12


def test_vector_text_is_what_the_plan_embeds() -> None:
    query = "What does Ann do at Zentrix?"
    assert vector_text(query, PROFILE, CFG) == _plan(CFG, query).vector_text
    assert vector_text(query, PROFILE, SIMPLE) == query


def test_run_puts_the_plan_in_the_state() -> None:
    state = RecallState(request=RecallRequest(query="Ann's cello"), preset=FULL, profile=PROFILE)
    assert Understand().run(state, ctx()) is None
    assert state.plan.query == "Ann's cello"


def test_entity_keys_are_ngrams_without_stop_words_or_speakers() -> None:
    keys = entity_keys("Did Ann visit the Louvre museum?", ["Ann"], QueryConfig())
    assert "louvre" in keys and "louvre museum" in keys and "ann" not in keys
    assert "the" not in keys and len(keys) == len(set(keys))
    capped = entity_keys("a b c d e f g h", [], QueryConfig(entity_max_keys=3))
    assert len(capped) == 3
