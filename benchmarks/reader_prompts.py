"""The two prompts the reader-judged benchmark compares, for one question and one budget.

* **mnemograph**: the assembler's ``/context`` prompt, made as the harness makes it
  (:class:`benchmarks.context_bench.AssemblerContext`: ``context_window`` = the budget,
  headroom 1.0, no safety margin, ``now`` = the question time).
* **dense-rag**: :mod:`benchmarks.dense_rag` packed into as many characters as the Mnemograph
  prompt has, in the same frame (data notice, ``## Recalled memories`` records, the query): a
  reader cannot tell the two apart by their frame.

Both read only: recall runs with ``touch=False``; the assembler may queue a schema build for
a stage whose summary is missing or stale, as any ``/context`` call does.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from benchmarks.dense_rag import DenseHit, dense_hits

CONDITIONS: tuple[str, ...] = ("mnemograph", "dense-rag")


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
        return dense_hits(self._recaller, space, question, now)
