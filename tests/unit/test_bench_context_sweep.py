"""The context sweep's pure parts: variant parsing and scoring."""

import pytest

from benchmarks.context_sweep import parse_variant, score


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
