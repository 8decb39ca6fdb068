"""The dense-RAG baseline: what a plain retrieval pipeline would hand the reader.

Dense ``/recall`` (preset ``dense``, k = :data:`DENSE_K`, rank order, ``touch`` off), each long
memory shown by its best chunk (the excerpt ``/context`` shows too), packed first fit in rank
order into a character budget and rendered in the assembler's frame: the data notice, one
``## Recalled memories`` block of ``[date]`` / ``who: what`` records, the query. Two users:

* the harness (:class:`DenseRagContext`, context system ``dense-rag``): the whole prompt within
  the budget's tokens (chars/3), its records as spans for context precision;
* the reader-judged benchmark (:mod:`benchmarks.reader_prompts`): packed into as many
  characters as Mnemograph's prompt for the same question.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from benchmarks.context_bench import response_spans
from benchmarks.packing import CHARS_PER_TOKEN, estimate_tokens
from benchmarks.sut import AssembledContext, ContextInput
from pipelines.assemble.items import excerpt
from pipelines.prompt.blocks import DATA_NOTICE, MemoryRecord, render_records_block

DENSE_HEADER = "## Recalled memories"
DENSE_SECTION = "recalled"
DENSE_K = 100
_MEMO = 64  # questions whose recall is kept for the next budget


@dataclass(frozen=True)
class DenseHit:
    """One dense recall result as the prompt shows it: its text (a long memory's best
    chunk), speaker and date."""

    id: str
    text: str
    speaker: str
    date: str


@dataclass(frozen=True)
class DensePrompt:
    prompt: str
    section: str
    """The ``## Recalled memories`` section ("" when no record fits)."""
    ids: tuple[str, ...]


def dense_prompt(question: str, hits: Sequence[DenseHit], max_chars: int) -> DensePrompt:
    """The prompt of at most ``max_chars`` characters (when no record fits, the bare frame):
    ``hits`` first fit in rank order."""
    kept: list[MemoryRecord] = []
    best = DensePrompt(_frame(question, ""), "", ())
    for h in hits:
        trial = [*kept, MemoryRecord(h.id, h.text, h.speaker, h.date)]
        section = f"{DENSE_HEADER}\n{render_records_block(trial)}"
        text = _frame(question, section)
        if len(text) <= max_chars:
            kept = trial
            best = DensePrompt(text, section, tuple(m.id for m in kept))
    return best


def _frame(question: str, section: str) -> str:
    return "\n\n".join([DATA_NOTICE, *([section] if section else []), f"## Query\n{question}"])


def _date(moment: Any) -> str:
    native = getattr(moment, "to_native", None)
    value = native() if callable(native) else moment
    return value.date().isoformat() if isinstance(value, datetime) else "?"


def dense_hits(recaller: Any, space: str, question: str, now: datetime | None) -> list[DenseHit]:
    """Dense recall of ``question`` in rank order, long memories by their best chunk."""
    from pipelines.recall.presets import DENSE
    from pipelines.recall.request import RecallRequest

    req = RecallRequest(query=question, k=DENSE_K, touch=False, now=now, order="relevance")
    resp = recaller.recall(space, req, preset=DENSE)
    return [
        DenseHit(
            id=str(r.id),
            text=excerpt(str(r.id), r.content or "", r.chunks, 1),
            speaker=str(r.speaker or r.role or "?"),
            date=_date(r.time),
        )
        for r in resp.results
    ]


class DenseRagContext:
    """The dense-RAG baseline as a harness context system: the prompt within the budget
    (chars/3 tokens, the query and notice included, as the assembler's are). One recall per
    question serves every budget (a small memo). :meth:`close` stops the recaller."""

    name = "dense-rag"

    def __init__(self, engine: Any) -> None:
        from pipelines.recall.config import DEFAULT_RECALL_CONFIG
        from pipelines.recall.service import open_recaller

        self._recaller, self._close = open_recaller(engine, DEFAULT_RECALL_CONFIG)
        self._memo: OrderedDict[tuple[str, str, datetime | None], list[DenseHit]] = OrderedDict()
        self._lock = threading.Lock()

    def close(self) -> None:
        self._close()

    def hits(self, space: str, question: str, now: datetime | None) -> list[DenseHit]:
        key = (space, question, now)
        with self._lock:
            got = self._memo.get(key)
        if got is None:
            got = dense_hits(self._recaller, space, question, now)
            with self._lock:
                self._memo[key] = got
                while len(self._memo) > _MEMO:
                    self._memo.popitem(last=False)
        return got

    def assemble(self, space: str, query: ContextInput) -> AssembledContext:
        t0 = time.perf_counter()
        hits = self.hits(space, query.text, query.question_time)
        made = dense_prompt(query.text, hits, query.budget_tokens * CHARS_PER_TOKEN)
        return AssembledContext(
            memory_ids=list(made.ids),
            used_tokens=estimate_tokens(made.prompt),
            latency_ms=(time.perf_counter() - t0) * 1000,
            spans=response_spans({DENSE_SECTION: made.section}, {DENSE_SECTION: list(made.ids)}),
            prompt=made.prompt,
        )
