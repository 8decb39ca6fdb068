"""Tests for the priority-budgeted prompt decomposer."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.assemble.config import AssemblyConfig
from pipelines.assemble.render import (
    SectionKind,
    build_sections,
    fit_sections,
    render_memory_section,
)
from pipelines.prompt.blocks import MemoryRecord, StageSummaryRecord, parse_records
from pipelines.prompt.decomposer import DecomposedPrompt, Slot, decompose
from pipelines.prompt.template import fill_template
from pipelines.prompt.tokens import CharsPerToken
from pipelines.prompt.warning import BANNER_HEADER, prepend_banner

EST = CharsPerToken(3)
CFG = AssemblyConfig()


class Superadditive:
    """An estimator where joining texts costs more than the parts (forces the safety loop)."""

    def count(self, text: str) -> int:
        return len(text) // 3 + len(text) ** 2 // 4_000 + (1 if text else 0)


def banner_entries(result: DecomposedPrompt) -> dict[str, tuple[int, int]]:
    """{key: (kept, original)} parsed from the banner lines."""
    if result.warning is None:
        return {}
    entries = {}
    compact = re.match(rf"^{re.escape(BANNER_HEADER)} \(tokens kept/original\): (.*)$",
                       result.warning)  # fmt: skip
    if compact:
        for item in compact.group(1).split(", "):
            key, counts = item.split(" ")
            kept, original = counts.split("/")
            entries[key] = (int(kept), int(original))
        return entries
    for line in result.warning.splitlines():
        kept = re.match(r"^- (\w+): kept (\d+) of (\d+) tokens \(\d+%\)$", line)
        gone = re.match(r"^- (\w+): removed entirely \(0 of (\d+) tokens\)$", line)
        if kept:
            entries[kept.group(1)] = (int(kept.group(2)), int(kept.group(3)))
        elif gone:
            entries[gone.group(1)] = (0, int(gone.group(2)))
    return entries


def importance_order(slots: list[Slot]) -> list[int]:
    """Indices from least to most important (the decomposer's tie rule)."""
    return sorted(range(len(slots)), key=lambda i: (-slots[i].priority, -i))


# ----------------------------------------------------------------------------- examples


def test_fast_path_uses_everything_verbatim() -> None:
    template = "Context:\n{{CONTEXT}}\n\nQuestion: {{QUERY}}"
    slots = [Slot("QUERY", "Which cache did we pick?", 0), Slot("CONTEXT", "We chose Redis.", 1)]
    result = decompose(template, slots, context_window=4096)
    assert result.fast_path
    assert result.prompt == "Context:\nWe chose Redis.\n\nQuestion: Which cache did we pick?"
    assert result.warning is None
    assert all(r.retention == 1.0 and r.condenser is None and r.share is None for r in result.slots)
    assert result.ceiling == 3072
    assert result.shell_tokens == EST.count("Context:\n\n\nQuestion: ")
    assert result.budget == 3072 - result.shell_tokens


def test_hand_computed_budget_and_banner() -> None:
    # W = 800, h = 0.75 -> ceiling 600; shell "Q: \n" = 4 chars -> 2 tokens; B = 598.
    template = "Q: {{QUERY}}\n{{NOTES}}"
    notes = "\n".join(f"note {i:03d}: " + "x" * 80 for i in range(40))  # 40 * 90 chars
    slots = [Slot("QUERY", "What changed?", 0), Slot("NOTES", notes, 1, "truncate")]
    result = decompose(template, slots, context_window=800, config=CFG)
    assert (result.ceiling, result.shell_tokens, result.budget, result.limit) == (600, 2, 598, 600)
    assert not result.fast_path and result.fits
    assert result.prompt_tokens <= 600
    query, notes_report = result.slot("QUERY"), result.slot("NOTES")
    assert query.content == "What changed?" and query.condenser is None
    assert notes_report.condenser == "truncate"
    assert notes_report.original_tokens == EST.count(notes)
    assert notes_report.final_tokens < 600
    assert result.prompt.startswith(BANNER_HEADER)
    assert banner_entries(result) == {
        "NOTES": (notes_report.final_tokens, notes_report.original_tokens)
    }
    # The banner was budgeted: its tokens were reserved out of the slot budget.
    assert result.banner_reserve >= EST.count(result.warning or "")
    # Recycling: the query's unused share went to NOTES, so little is wasted.
    assert result.prompt_tokens >= 600 - 40


def test_placeholder_text_inside_content_is_not_expanded() -> None:
    template = "{{A}}|{{B}}"
    result = decompose(template, [Slot("A", "{{B}}", 0), Slot("B", "b", 1)], 4096)
    assert result.prompt == "{{B}}|b"


def test_unknown_placeholders_are_left_alone() -> None:
    assert fill_template("{{A}} {{OTHER}}", {"A": "x"}) == "x {{OTHER}}"


@pytest.mark.parametrize(
    ("template", "slots", "message"),
    [
        ("{{A}}", [Slot("A", "x", 0), Slot("A", "y", 1)], "unique"),
        ("no placeholder", [Slot("A", "x", 0)], "exactly once"),
        ("{{A}}{{A}}", [Slot("A", "x", 0)], "exactly once"),
    ],
)
def test_invalid_templates_are_rejected(template: str, slots: list[Slot], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decompose(template, slots, 4096)


def test_slot_validation() -> None:
    with pytest.raises(ValueError, match="condenser"):
        Slot("A", "x", 0, "no_such_condenser")
    with pytest.raises(ValueError, match="key"):
        Slot("not a key", "x", 0)


def test_min_share_goes_to_the_most_important_slots_first() -> None:
    # Ten large slots, 300-token budget: not everyone can get min_share (50).
    template = "\n".join(f"{{{{S{i}}}}}" for i in range(10))
    slots = [Slot(f"S{i}", ("word " * 400).strip(), priority=i) for i in range(10)]
    result = decompose(template, slots, context_window=300, headroom=1.0)
    assert result.fits
    finals = [result.slot(f"S{i}").final_tokens for i in range(10)]
    assert finals[0] > 0, "the most important slot must not be starved"
    assert finals[-1] == 0, "the least important slot gives way"
    assert finals == sorted(finals, reverse=True)


def test_large_shell_gets_min_budget_but_never_the_whole_window() -> None:
    shell = "s" * 2_700  # 900 tokens of fixed template text
    template = shell + "{{X}}"
    slots = [Slot("X", "content " * 500, 0)]
    result = decompose(template, slots, context_window=1300)
    # ceiling 975 - shell 900 = 75 < min_budget 300, so B = 300 and L = min(1200, 1300 - 64).
    assert (result.budget, result.limit) == (300, 1200)
    assert result.fits and result.prompt_tokens <= 1200
    assert result.prompt_tokens > result.ceiling  # allowed: the floor eats into the reserve


def test_safety_loop_handles_a_non_additive_estimator() -> None:
    est = Superadditive()
    template = "Header\n{{A}}\n{{B}}\n{{C}}"
    slots = [Slot(k, f"{k} line\n" * 300, p) for p, k in enumerate("ABC")]
    result = decompose(template, slots, context_window=2000, estimator=est)
    assert result.safety_iterations > 0
    assert result.fits and est.count(result.prompt) <= result.limit


def test_retention_is_not_monotone_in_priority_by_design() -> None:
    # A small unimportant slot fits its share and keeps everything; a huge important
    # slot is condensed.  This is the documented, intended behaviour.
    template = "{{BIG}}\n{{SMALL}}"
    slots = [Slot("BIG", "alpha beta gamma. " * 400, 0), Slot("SMALL", "tiny note", 5)]
    result = decompose(template, slots, context_window=800)
    assert result.slot("SMALL").retention == 1.0
    assert result.slot("BIG").retention < 0.5
    assert set(banner_entries(result)) == {"BIG"}


def test_sections_keep_every_record_delimited_when_condensed() -> None:
    memories = [
        MemoryRecord(f"m{i}", f"Line {i}: we discussed the parser.\n" * 40, f"u{i}", None, "s1")
        for i in range(6)
    ]
    section = render_memory_section(SectionKind.CURRENT_STAGE, memories)
    template = "{{CURRENT}}\n\nQuestion: {{QUERY}}"
    slots = [Slot("QUERY", "What about the parser?", 0), Slot("CURRENT", section, 1)]
    result = decompose(template, slots, context_window=1500)
    current = result.slot("CURRENT")
    assert current.condenser == "memory_blocks"
    records = parse_records(current.content)
    assert [r.head for r in records] == [f"[? | s1] u{i}: " for i in range(6)]
    assert current.content.count("<memories>") == current.content.count("</memories>") == 1
    assert result.fits


# ----------------------------------------------------------------------------- properties

_words = st.sampled_from(
    ["alpha", "beta", "Redis", "cache", "->", "uses", "def f(x):", "2025-01-02", "why?", "ok."]
)
_line = st.lists(_words, min_size=0, max_size=12).map(" ".join)
_content = st.one_of(
    st.lists(_line, min_size=0, max_size=120).map("\n".join),
    st.text(max_size=600),
    st.tuples(st.lists(_line, min_size=1, max_size=6), st.integers(1, 150)).map(
        lambda pair: "\n".join(pair[0] * pair[1])
    ),
)
_estimators = st.one_of(st.integers(1, 4).map(CharsPerToken), st.just(Superadditive()))


@st.composite
def _problems(draw: st.DrawFn) -> tuple[str, list[Slot], int, float]:
    n = draw(st.integers(1, 5))
    keys = [f"K{i}" for i in range(n)]
    shell_parts = draw(st.lists(st.text(alphabet="ab \n", max_size=30), min_size=n + 1,
                                max_size=n + 1))  # fmt: skip
    order = draw(st.permutations(keys))
    template = shell_parts[0] + "".join(
        f"{{{{{k}}}}}{part}" for k, part in zip(order, shell_parts[1:], strict=True)
    )
    condensers = st.sampled_from([None, None, "truncate", "user_message", "timeline"])
    upstream = st.one_of(st.none(), st.integers(0, 3000))
    slots = [
        Slot(k, draw(_content), draw(st.integers(0, 3)), draw(condensers), draw(upstream))
        for k in keys
    ]
    window = draw(st.integers(200, 1500))
    headroom = draw(st.sampled_from([0.5, 0.75, 0.8, 1.0]))
    return template, slots, window, headroom


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=_problems(), est=_estimators)
def test_decompose_properties(
    problem: tuple[str, list[Slot], int, float], est: CharsPerToken | Superadditive
) -> None:
    template, slots, window, headroom = problem
    result = decompose(template, slots, window, headroom, est, CFG)
    reports = {r.key: r for r in result.slots}

    # Bookkeeping is truthful.
    values = {r.key: r.content for r in result.slots}
    assert result.prompt == prepend_banner(result.warning, fill_template(template, values))
    assert result.prompt_tokens == est.count(result.prompt)
    for slot in slots:
        report = reports[slot.key]
        assert report.input_tokens == est.count(slot.content)
        assert report.original_tokens == max(report.input_tokens, slot.upstream_tokens or 0)
        assert report.final_tokens == est.count(report.content)
        assert (report.condenser is None) == (report.content == slot.content)

    # Budget invariant: fits the limit, or nothing is left to cut.
    assert result.limit <= window - CFG.safety_margin or result.limit == 0
    assert result.fits == (result.prompt_tokens <= result.limit)
    if not result.fits:
        assert all(r.final_tokens == 0 or r.content == "" for r in result.slots)
    ceiling = math.floor(window * headroom)
    if result.shell_tokens + CFG.min_budget <= ceiling <= window - CFG.safety_margin:
        assert result.limit == ceiling
        if result.fits:
            assert result.prompt_tokens <= ceiling

    # The banner names exactly the slots below the threshold, with their counts.
    below = {
        r.key: (r.final_tokens, r.original_tokens)
        for r in result.slots
        if r.retention < CFG.warning_threshold
    }
    assert banner_entries(result) == below
    assert (result.warning is None) == (not below)

    if result.fast_path:
        assert result.warning is None
        assert all(r.content == s.content for r, s in zip(result.slots, slots, strict=True))
        return
    if all(r.condenser is None for r in result.slots):
        assert result.warning is not None  # only upstream cuts to report

    # P1: every slot ends at or under its share.
    for r in result.slots:
        assert r.share is not None and r.final_tokens <= r.share
    # P2: a condensed slot implies every less important slot is condensed or smaller.
    order = importance_order(slots)
    for pos, more in enumerate(order):
        a = reports[slots[more].key]
        if a.condenser is None:
            continue
        for less in order[:pos]:
            b = reports[slots[less].key]
            assert b.condenser is not None or b.input_tokens < a.input_tokens
    # P3: without safety steps, condensed shares are monotone in importance.
    if result.safety_iterations == 0:
        condensed = [reports[slots[i].key] for i in order if reports[slots[i].key].condenser]
        shares = [r.share or 0 for r in condensed]
        assert shares == sorted(shares)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=_problems())
def test_decompose_is_deterministic(problem: tuple[str, list[Slot], int, float]) -> None:
    template, slots, window, headroom = problem
    first = decompose(template, slots, window, headroom)
    assert decompose(template, slots, window, headroom) == first


def test_upstream_cuts_from_phase_fitting_still_reach_the_banner() -> None:
    memories = [MemoryRecord(f"m{i}", f"Fact {i} about the parser. " * 30) for i in range(8)]
    summaries = [StageSummaryRecord(f"s{i}", "Decisions: keep going. " * 10) for i in range(3)]
    sections = build_sections(memories[:5], memories[5:], summaries)
    fitted = fit_sections(sections, 1500, EST)
    assert fitted.allocation.shares == (900, 450, 150)
    texts = (
        fitted.sections.current_stage,
        fitted.sections.related_prior,
        fitted.sections.stage_summaries,
    )
    for text, granted in zip(texts, fitted.allocation.granted, strict=True):
        assert EST.count(text) <= granted
    keys = ("CURRENT", "RELATED", "SUMMARIES")
    template = "{{CURRENT}}\n\n{{RELATED}}\n\n{{SUMMARIES}}\n\nQ: {{QUERY}}"
    slots = [Slot("QUERY", "What about the parser?", 0)]
    for p, (key, text, original) in enumerate(
        zip(keys, texts, fitted.original_tokens, strict=True)
    ):
        slots.append(Slot(key, text, p + 1, upstream_tokens=original))
    result = decompose(template, slots, context_window=4096)
    assert result.fits
    assert all(result.slot(k).condenser is None for k in keys)  # nothing cut here...
    listed = banner_entries(result)  # ...but the upstream cuts are reported
    expected = {
        key
        for key, original, text in zip(keys, fitted.original_tokens, texts, strict=True)
        if EST.count(text) < 0.9 * original
    }
    assert set(listed) == expected and "SUMMARIES" in expected
    assert listed["SUMMARIES"][1] == fitted.original_tokens[2]
