"""The context sweep's pure parts: variant parsing and scoring."""

import pytest

from benchmarks.context_sweep import gold_ids, parse_variant, score


def test_variant_overrides_are_json_values_or_strings():
    assert parse_variant("half=compact_share=0.5,compact_record_tokens=30") == (
        "half",
        {"compact_share": 0.5, "compact_record_tokens": 30},
    )
    assert parse_variant("dates=record_time_precision=date") == (
        "dates",
        {"record_time_precision": "date"},
    )


@pytest.mark.parametrize("bad", ["noequals", "name=", "name=field", "name=a=1,b"])
def test_malformed_variants_are_refused(bad):
    with pytest.raises(ValueError):
        parse_variant(bad)


def test_score_counts_any_and_every_gold_turn():
    assert score({"a", "b"}, ["a", "x"]) == (True, False)
    assert score({"a", "b"}, ["b", "a"]) == (True, True)
    assert score({"a"}, []) == (False, False)


def _item(id_, selected=True, ppr=None):
    from pipelines.assemble.report import ItemReport

    extra = {} if ppr is None else {"ppr_mass": ppr}
    return ItemReport(id=id_, tokens=10, score=1.0, selected=selected, **extra)


def _report(mode, own, related):
    from pipelines.assemble.report import (
        AssemblyReport,
        CurrentStagePhase,
        PhasesReport,
        RelatedPriorPhase,
    )

    phases = PhasesReport.model_construct(
        current_stage=CurrentStagePhase.model_construct(items=own),
        related_prior=RelatedPriorPhase.model_construct(items=related),
    )
    return AssemblyReport.model_construct(mode=mode, phases=phases)


def test_phase_two_is_credited_only_with_the_gold_it_included():
    from benchmarks.context_sweep import PHASE_COUNTS, tally_phases

    counts = dict.fromkeys(PHASE_COUNTS, 0)
    gold = {"g1", "g2"}
    tally_phases(counts, _report("flat", [], [_item("g1")]), gold)  # flat: not counted
    tally_phases(counts, _report("staged", [_item("g1")], [_item("x", ppr=0.2)]), gold)
    tally_phases(counts, _report("staged", [], [_item("g2", ppr=0.1), _item("g1", False)]), gold)
    tally_phases(counts, _report("staged", [_item("g1")], [_item("g2")]), gold)
    assert counts == {
        "staged": 3,
        "phase2_included": 3,
        "phase2_gold": 2,
        "ppr_gold": 1,
        "phase2_only_gold": 1,
    }


def test_gold_ids_carry_the_conversation_prefix_in_the_scale_setting() -> None:
    assert gold_ids("conv-26", ["D1:3", "D2:1"], "per-conversation") == {"D1:3", "D2:1"}
    assert gold_ids("conv-26", ["D1:3"], "scale") == {"conv-26:D1:3"}
