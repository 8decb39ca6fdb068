"""Tests for pipelines.recall.presets (search as configuration: a preset is its steps)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import get_args

import pytest
from pydantic import ValidationError

from benchmarks.presets import BENCH_PRESETS, FULLTEXT, FUSED, FUSED_RERANK
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG, DEFAULT_SIGNALS, QueryConfig
from pipelines.recall.presets import DENSE, FAST, FULL, PRESETS, RecallPreset
from pipelines.recall.request import DEFAULT_PRESET, PresetName
from pipelines.recall.service import Recaller
from pipelines.recall.steps.base import Read, after_understand
from pipelines.recall.steps.candidates import Candidates
from pipelines.recall.steps.fuse import Fuse
from pipelines.recall.steps.select import Select
from pipelines.recall.steps.understand import Understand


def kinds(preset: RecallPreset) -> list[str]:
    return [s.kind for s in preset.steps]


def test_the_product_presets_are_what_a_request_can_name() -> None:
    assert list(PRESETS) == ["full", "fast", "dense"]
    assert set(PRESETS) == set(get_args(PresetName)) and DEFAULT_PRESET == "full"
    for name, preset in PRESETS.items():
        assert preset.name == name and preset.description


def test_full_runs_every_step_in_order() -> None:
    assert kinds(FULL) == [
        "understand",
        "embed",
        "candidates",
        "identifiers",
        "chunks",
        "standing",
        "validity",
        "fuse",
        "rerank",
        "session_documents",
        "late_interaction",
        "session_late_interaction",
        "embeddings",
        "echoes",
        "select",
        "replies",
        "standing_slots",
        "exact_first",
        "order",
        "abstain",
        "touch",
    ]
    assert FULL.config == {}  # the configuration's defaults are full's
    query = FULL.configured(DEFAULT_RECALL_CONFIG).query
    assert query.signals == DEFAULT_SIGNALS
    assert query.speakers and query.time_expressions and query.intent_profiles
    assert DEFAULT_RECALL_CONFIG.fusion.question_turn_factor < 1.0  # the question prior
    assert DEFAULT_RECALL_CONFIG.order.event_order
    assert FULL.needs_query_vector() and FULL.needs_query_tokens()


def test_fast_is_full_without_late_interaction() -> None:
    assert kinds(FAST) == [
        k for k in kinds(FULL) if k not in ("late_interaction", "session_late_interaction")
    ]
    assert FAST.needs_query_vector() and not FAST.needs_query_tokens()
    assert [s for s in FAST.steps] == [s for s in FULL.steps if s.kind in kinds(FAST)]


def test_dense_is_the_vector_signal_only() -> None:
    query = DENSE.configured(DEFAULT_RECALL_CONFIG).query
    assert query.signals == ("vector",) and not query.intent_profiles
    assert not query.speakers and not query.time_expressions
    assert not DENSE.has("rerank") and not DENSE.has("select")
    assert not DENSE.needs_query_vector()  # only its vector signal embeds the query


def test_the_benchmark_ladder_is_built_from_the_same_steps() -> None:
    assert list(BENCH_PRESETS) == [
        *("fulltext", "dense", "fused", "fused_rerank", "fast", "full", "full_no_chunks"),
        "dense_no_chunks",
    ]

    def query(preset: RecallPreset) -> QueryConfig:
        return preset.configured(DEFAULT_RECALL_CONFIG).query

    assert query(FULLTEXT).signals == ("fulltext",)
    assert query(FUSED).signals == DEFAULT_SIGNALS and not FUSED.has("rerank")
    for simple in (FULLTEXT, FUSED, FUSED_RERANK):
        config = simple.configured(DEFAULT_RECALL_CONFIG)
        assert not config.query.time_expressions and not config.query.speakers
        assert config.fusion.question_turn_factor == 1.0 and not config.order.event_order
    assert kinds(FUSED_RERANK) == [*kinds(FUSED)[:7], "rerank", *kinds(FUSED)[7:]]
    assert not any(p.has("select") for p in (FULLTEXT, FUSED, FUSED_RERANK))
    assert BENCH_PRESETS["full"] is FULL and BENCH_PRESETS["fast"] is FAST
    ablations = set(BENCH_PRESETS) - set(PRESETS)
    # not names a request can use
    assert ablations == {"fulltext", "fused", "fused_rerank", "full_no_chunks", "dense_no_chunks"}
    assert kinds(BENCH_PRESETS["full_no_chunks"]) == [k for k in kinds(FULL) if k != "chunks"]


def test_presets_are_frozen_and_validated() -> None:
    with pytest.raises(ValidationError):
        FULL.name = "other"  # type: ignore[misc]
    for signals in (["vector", "magic"], ["vector", "vector"], []):
        with pytest.raises(ValidationError, match=r"query\.signals"):
            FULL.with_config({"query": {"signals": signals}}, name="x", description="x")
    with pytest.raises(ValidationError, match=r"config\.fusion: unknown setting 'bogus'"):
        FULL.with_config({"fusion": {"bogus": True}}, name="x", description="x")
    with pytest.raises(ValidationError):
        Fuse(bogus=True)  # type: ignore[call-arg]


def test_a_preset_checks_its_step_order() -> None:
    with pytest.raises(ValidationError, match="needs the steps"):
        RecallPreset(name="x", description="x", steps=(Understand(), Candidates()))
    with pytest.raises(ValidationError, match="'fuse' needs 'candidates' before it"):
        RecallPreset(name="x", description="x", steps=(Understand(), Fuse(), Candidates()))
    with pytest.raises(ValidationError, match="unique"):
        RecallPreset(name="x", description="x", steps=(Understand(), Candidates(), Fuse(), Fuse()))
    with pytest.raises(ValidationError, match="'select' needs 'embeddings'"):
        RecallPreset(
            name="x", description="x", steps=(Understand(), Candidates(), Fuse(), Select())
        )


def test_the_steps_declare_the_reads_the_runner_starts_ahead() -> None:
    declared = {r.name: s.kind for s in FULL.steps for r in s.reads}
    assert declared == {
        "lexical": "candidates",
        "session_ranking": "session_documents",
        "standing_statements": "standing",
    }
    assert {r.name for s in DENSE.steps for r in s.reads} == {"lexical"}


def test_a_read_may_not_take_a_step_name() -> None:
    class Clashing(Fuse):
        reads = (Read("fuse", after_understand, lambda s, c: True, lambda s, c: None),)

    with pytest.raises(ValidationError, match="share the names"):
        RecallPreset(name="x", description="x", steps=(Understand(), Candidates(), Clashing()))


def test_variants_derive_by_removing_steps_or_configuring_them() -> None:
    plain = FULL.with_config(
        {"fusion": {"question_turn_factor": 1.0}}, name="plain", description="d"
    )
    assert kinds(plain) == kinds(FULL)
    assert plain.configured(DEFAULT_RECALL_CONFIG).fusion.question_turn_factor == 1.0
    both = DENSE.with_config({"query": {"speakers": True}}, name="x", description="x")
    query = both.configured(DEFAULT_RECALL_CONFIG).query
    assert query.speakers and query.signals == ("vector",)  # nested keys merge one by one
    assert FULL.without("rerank", name="n", description="d").has("rerank") is False
    assert DENSE.without("chunks", name="n", description="d").config == DENSE.config


def test_a_preset_dumps_its_steps_and_its_configuration() -> None:
    dumped = DENSE.model_dump(mode="json")
    assert [s["kind"] for s in dumped["steps"]] == kinds(DENSE)
    assert {"kind": "fuse"} in dumped["steps"]  # a step is its kind: its tuning is config
    assert dumped["config"]["query"] == {
        "time_expressions": False,
        "speakers": False,
        "signals": ["vector"],
        "intent_profiles": False,
    }


def test_a_recaller_runs_each_preset_with_its_configuration() -> None:
    base = merge_overrides(DEFAULT_RECALL_CONFIG, {"rerank": {"weight": 0.1}}, "recall")
    recaller = Recaller(SimpleNamespace(embedder=None), base)  # type: ignore[arg-type]
    assert recaller._config_of(FULL) is base  # no overrides: the Recaller's own
    dense = recaller._config_of(DENSE)
    assert dense.query.signals == ("vector",) and dense.rerank.weight == 0.1  # over the base
    assert recaller._config_of(DENSE) is dense  # merged once
