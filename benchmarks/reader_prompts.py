"""The two prompts the reader-judged benchmark compares, for one question and one budget.

* **mnemograph**: the assembler's ``/context`` prompt, made as the harness makes it
  (:class:`benchmarks.context_bench.AssemblerContext`: ``context_window`` = the budget,
  headroom 1.0, no safety margin, ``now`` = the question time).
* **dense-rag**: dense ``/recall`` (preset ``dense``, rank order, ``touch`` off) with every
  long memory shown by its best chunk (the excerpt the context shows too), packed first fit in
  rank order into as many characters as the Mnemograph prompt has, and rendered in the same
  shape (data notice, one ``## Recalled memories`` block of ``[date]`` / ``who: what``
  records, the query): a reader cannot tell the two apart by their frame.

Both read only: recall runs with ``touch=False``; the assembler may queue a schema build for
a stage whose summary is missing or stale, as any ``/context`` call does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pipelines.assemble.blocks import DATA_NOTICE, MemoryRecord, render_records_block
from pipelines.assemble.excerpt import excerpt

CONDITIONS: tuple[str, ...] = ("mnemograph", "dense-rag")
DENSE_HEADER = "## Recalled memories"
DENSE_K = 100


@dataclass(frozen=True)
class DenseHit:
    """One dense recall result as the prompt shows it: its text (a long memory's best
    chunk), speaker and date."""

    id: str
    text: str
    speaker: str
    date: str


def dense_prompt(question: str, hits: Sequence[DenseHit], max_chars: int) -> tuple[str, int]:
    """The dense-RAG prompt of at most ``max_chars`` characters (when even no record fits,
    the bare frame), and how many of ``hits`` it holds: first fit in rank order."""
    kept: list[MemoryRecord] = []
    prompt = _frame(question, kept)
    for h in hits:
        trial = [*kept, MemoryRecord(h.id, h.text, h.speaker, h.date)]
        text = _frame(question, trial)
        if len(text) <= max_chars:
            kept, prompt = trial, text
    return prompt, len(kept)


def _frame(question: str, records: Sequence[MemoryRecord]) -> str:
    parts = [DATA_NOTICE]
    if records:
        parts.append(f"{DENSE_HEADER}\n{render_records_block(records)}")
    parts.append(f"## Query\n{question}")
    return "\n\n".join(parts)


def _date(moment: Any) -> str:
    native = getattr(moment, "to_native", None)
    value = native() if callable(native) else moment
    return value.date().isoformat() if isinstance(value, datetime) else "?"


class PromptMaker:
    """Both prompts of a question at a budget, against spaces already ingested (reads only).
    :meth:`close` shuts the assembler's and the recaller's threads down."""

    def __init__(self, engine: Any) -> None:
        from benchmarks.context_bench import AssemblerContext
        from pipelines.recall.config import DEFAULT_RECALL_CONFIG
        from pipelines.recall.service import open_recaller

        self._context = AssemblerContext(engine, "assembler")
        self._recaller, self._close_recaller = open_recaller(engine, DEFAULT_RECALL_CONFIG)

    def close(self) -> None:
        self._context.close()
        self._close_recaller()

    def mnemograph(self, space: str, question: str, now: datetime | None, budget: int) -> str:
        from benchmarks.sut import ContextInput

        return self._context.assemble(space, ContextInput(question, now, budget)).prompt

    def dense_hits(self, space: str, question: str, now: datetime | None) -> list[DenseHit]:
        from pipelines.recall.presets import DENSE
        from pipelines.recall.request import RecallRequest

        req = RecallRequest(query=question, k=DENSE_K, touch=False, now=now, order="relevance")
        resp = self._recaller.recall(space, req, preset=DENSE)
        return [
            DenseHit(
                id=str(r.id),
                text=excerpt(str(r.id), r.content or "", r.chunks, 1),
                speaker=str(r.speaker or r.role or "?"),
                date=_date(r.time),
            )
            for r in resp.results
        ]
