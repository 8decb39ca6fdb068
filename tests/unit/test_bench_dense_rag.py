"""The dense-RAG baseline's packing (pure): first fit in rank order within a character budget,
in the assembler's frame, and its records as context-precision spans."""

from __future__ import annotations

from benchmarks.context_bench import response_spans
from benchmarks.dense_rag import DENSE_HEADER, DenseHit, dense_prompt
from pipelines.prompt.blocks import DATA_NOTICE


def hits() -> list[DenseHit]:
    return [
        DenseHit("a", "Pepper is my grey cat.", "Ann", "2024-05-10"),
        DenseHit("b", "x" * 500, "Ben", "2024-05-10"),  # too long for the budget below
        DenseHit("c", "Lotte lives in Utrecht.", "Ann", "2024-05-12"),
    ]


def test_first_fit_in_rank_order_within_the_budget():
    bare = dense_prompt("Where?", [], 10_000)
    assert bare.prompt == f"{DATA_NOTICE}\n\n## Query\nWhere?" and bare.ids == ()
    made = dense_prompt("Where?", hits(), 300)
    assert made.ids == ("a", "c")  # b is skipped, c still fits
    assert len(made.prompt) <= 300
    assert made.prompt.startswith(f"{DATA_NOTICE}\n\n{DENSE_HEADER}\n<memories>\n[2024-05-10]\n")
    assert "Ann: Pepper is my grey cat.\n[2024-05-12]\nAnn: Lotte lives in Utrecht." in made.prompt
    assert made.prompt.endswith("</memories>\n\n## Query\nWhere?")
    assert dense_prompt("Where?", hits(), 20).ids == ()  # not even the frame fits: bare


def test_records_are_spans_of_their_memories():
    made = dense_prompt("Where?", hits(), 300)
    spans = response_spans({"recalled": made.section}, {"recalled": list(made.ids)})
    assert sum(s.chars for s in spans) == len(made.section)
    assert [(s.memory_id, s.chars) for s in spans if s.record] == [
        ("a", len("Ann: Pepper is my grey cat.")),
        ("c", len("Ann: Lotte lives in Utrecht.")),
    ]
