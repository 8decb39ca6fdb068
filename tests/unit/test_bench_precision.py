"""Context precision: spans of a context's text (flat lines, assembler sections) and the share
of them that gold turns and their sessions hold, on hand-computed synthetic outcomes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from benchmarks import metrics as M
from benchmarks import reports, runner
from benchmarks.context_bench import response_spans
from benchmarks.format import Conversation, Dataset, Question, Session, Turn
from benchmarks.packing import render, spans
from benchmarks.sut import ContextSpan, Hit
from pipelines.prompt.blocks import MemoryRecord, render_records_block, render_summary_block
from pipelines.prompt.blocks import StageSummaryRecord as Summary

T0 = datetime(2024, 1, 1, 9, tzinfo=UTC)


def test_precision_hand_computed():
    session_of = {"g": "s1", "n1": "s1", "n2": "s2", "f": "s2"}
    a = M.Precise(
        [
            ContextSpan("recalled", 10),  # framing
            ContextSpan("recalled", 30, "g", record=True),  # gold turn
            ContextSpan("recalled", 20, "n1", record=True),  # gold session, not gold turn
            ContextSpan("recalled", 40, "n2", record=True),
        ],
        frozenset({"g"}),
        frozenset({"s1"}),
        session_of,
    )
    b = M.Precise(
        [
            ContextSpan("facts", 10),
            ContextSpan("facts", 30, "f", record=True),  # the gold turn, as a fact
            ContextSpan("facts", 10, None, record=True),  # a record nobody could attribute
            ContextSpan("current_stage", 50, "n1", record=True),
        ],
        frozenset({"f"}),
        frozenset({"s2"}),
        session_of,
    )
    no_gold = M.Precise(
        [ContextSpan("recalled", 9, "g", record=True)], frozenset(), frozenset(), {}
    )
    empty = M.Precise([], frozenset({"g"}), frozenset({"s1"}), session_of)
    p = M.context_precision([a, b, no_gold, empty])
    assert p["n"] == 2  # no gold: not scored; no text: nothing to measure
    assert p["turn"] == pytest.approx((30 / 100 + 30 / 100) / 2)
    assert p["session"] == pytest.approx((50 / 100 + 30 / 100) / 2)
    assert p["unattributed"] == pytest.approx((0 + 10 / 100) / 2)
    f = p["facts"]
    assert f["n"] == 1  # only b has a facts section
    assert f["turn"] == pytest.approx(30 / 50) and f["session"] == pytest.approx(30 / 50)
    assert f["share"] == pytest.approx((0 + 50 / 100) / 2)  # over every scored context
    none = M.context_precision([])
    assert none["n"] == 0 and none["turn"] is None and none["facts"]["share"] is None


def test_flat_lines_as_spans():
    hits = [
        Hit("a", "s1", "I bought a kettle", speaker="Ann", time=T0),
        Hit("b", "s1", "Nice!", speaker="Bob", time=None),
    ]
    got = spans(hits)
    text = "\n".join(render(h) for h in hits)
    assert sum(s.chars for s in got) == len(text)
    assert [(s.memory_id, s.chars) for s in got if s.record] == [
        ("a", len("Ann: I bought a kettle")),
        ("b", len("Bob: Nice!")),
    ]
    assert all(s.section == "flat" for s in got)


def test_assembler_sections_as_spans():
    records = [
        MemoryRecord("t1", "I bought a kettle", "Ann", "2024-01-01"),
        MemoryRecord("t2", "Nice!", "Bob", "2024-01-01"),
        MemoryRecord("t3", "It broke\non Sunday", "Ann", "2024-01-05"),  # two lines
    ]
    current = "## Current stage: kitchen\n" + render_records_block(records)
    facts = "## Facts\n" + render_records_block([MemoryRecord("f9", "Ann owns a kettle", "Ann")])
    summaries = "## Stage summaries\n" + render_summary_block(Summary("s0", "Ann shops."))
    sections = {
        "current_stage": current,
        "related_prior": "",
        "stage_summaries": summaries,
        "facts": facts,
    }
    included = {"current_stage": ["t1", "t2", "t3"], "facts": ["t1"], "stage_summaries": []}
    got = response_spans(sections, included)
    assert sum(s.chars for s in got) == len(current) + len(summaries) + len(facts)
    own = [(s.section, s.memory_id, s.chars) for s in got if s.record]
    assert own == [
        ("current_stage", "t1", len("Ann: I bought a kettle")),
        ("current_stage", "t2", len("Bob: Nice!")),
        ("current_stage", "t3", len("Ann: It broke\n  on Sunday")),  # continuation indented
        ("facts", "t1", len("Ann: Ann owns a kettle")),  # the fact's turn
    ]
    # summaries are framing (no memory); a section whose ids do not match its records is
    # kept unattributed rather than guessed
    assert [s.memory_id for s in got if s.section == "stage_summaries"] == [None]
    loose = response_spans({"facts": facts}, {"facts": ["t1", "t2"]})
    assert [(s.memory_id, s.record) for s in loose] == [(None, True), (None, False)]


def _dataset() -> Dataset:
    s1 = Session(
        "s1",
        (Turn("t1", "user", "Ann", "I bought a kettle"), Turn("t2", "assistant", "Bob", "Nice")),
        started_at=T0,
    )
    s2 = Session("s2", (Turn("t3", "user", "Ann", "The kettle broke"),), started_at=T0)
    qs = (
        Question("q1", "What did Ann buy?", "single-hop", ("t1",), question_time=T0),
        Question("q2", "No evidence", "single-hop", (), question_time=T0),
    )
    return Dataset("p", (Conversation("c1", (s1, s2), qs),))


def test_score_reports_precision_per_system_and_budget(tmp_path):
    run = runner.SettingRun(
        setting="per-conversation",
        units=[runner.UnitRun(space="x", conversations=[("c1", "")])],
    )
    ctx = (
        ContextSpan("recalled", 20, "t1", record=True),
        ContextSpan("recalled", 20, "t2", record=True),
        ContextSpan("recalled", 60, "t3", record=True),
    )
    for q in ("q1", "q2"):
        run.context.append(runner.ContextOutcome("c1", q, "flat", 1000, ("t1",), 30, 1.0))
        run.context.append(
            runner.ContextOutcome(
                "c1", q, "assembler", 1000, ("t1", "t2", "t3"), 34, 1.0, spans=ctx
            )
        )
    options = runner.RunOptions(configs=[], progress=False)
    res = runner.score(_dataset(), run, options)
    p = res["context"]["assembler"]["1000"]["precision"]
    assert p["n"] == 1  # q2 has no gold
    assert p["turn"] == pytest.approx(0.2) and p["session"] == pytest.approx(0.4)
    assert res["context"]["flat"]["1000"]["precision"]["n"] == 0  # no spans recorded
    result = {"name": "prec", "dataset": {"name": "p"}, "results": {"per-conversation": res}}
    res["context_status"] = {"flat": "run", "assembler": "run"}
    text = reports.recall_markdown(result)
    assert "Context precision" in text and "| assembler | 1000 | 1 | 0.200 | 0.400 |" in text
    assert "context precision" in reports.figures_markdown(result)


def test_rescore_units_and_sample():
    import random

    from benchmarks.context_rescore import sample, units_of_run

    run = {"results": {"scale": {"ingest": [{"space": "sp", "conversations": ["a", "b"]}]}}}
    (u,) = units_of_run(run, "scale")
    assert u.space == "sp" and u.conversations == [("a", "a:"), ("b", "b:")]
    with pytest.raises(ValueError, match="per-conversation"):
        units_of_run(run, "per-conversation")
    got = sample(list(range(20)), 5, random.Random(1))
    assert len(got) == 5 and list(got) == sorted(got)  # kept in order
    assert got == sample(list(range(20)), 5, random.Random(1))
    assert sample([1, 2], 5, random.Random(1)) == (1, 2)
