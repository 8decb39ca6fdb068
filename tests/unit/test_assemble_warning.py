"""Tests for the truncation banner."""

from __future__ import annotations

from pipelines.prompt.warning import (
    BANNER_HEADER,
    TruncatedSlot,
    build_truncation_banner,
    prepend_banner,
    retention,
)


def test_banner_names_each_slot_with_counts() -> None:
    banner = build_truncation_banner(
        [TruncatedSlot("RELATED", 756, 340), TruncatedSlot("SUMMARIES", 400, 0)]
    )
    assert banner is not None
    lines = banner.splitlines()
    assert lines[0] == BANNER_HEADER and lines[0].startswith("#")
    assert "missing" in lines[1]
    assert lines[2:] == [
        "- RELATED: kept 340 of 756 tokens (44%)",
        "- SUMMARIES: removed entirely (0 of 400 tokens)",
    ]


def test_percentages_round_down_so_below_threshold_never_reads_as_threshold() -> None:
    assert TruncatedSlot("A", 1000, 899).line() == "- A: kept 899 of 1000 tokens (89%)"


def test_no_banner_without_truncation_and_prepend() -> None:
    assert build_truncation_banner([]) is None
    assert prepend_banner(None, "prompt") == "prompt"
    assert prepend_banner("B", "prompt") == "B\n\nprompt"


def test_compact_banner_is_one_line() -> None:
    banner = build_truncation_banner([TruncatedSlot("A", 10, 2), TruncatedSlot("B", 5, 0)], True)
    assert banner == f"{BANNER_HEADER} (tokens kept/original): A 2/10, B 0/5"


def test_retention_of_empty_original_is_full() -> None:
    assert retention(0, 0) == 1.0
    assert retention(200, 50) == 0.25
