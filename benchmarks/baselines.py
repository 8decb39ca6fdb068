"""Reference baselines outside the database: exact dense retrieval and BM25, in memory.

They answer "what would plain dense-RAG / BM25 over the same turns give?" (peers.md §6: publish
the plain baselines beside the system) and cross-check the harness: the database presets
``dense`` and ``fulltext`` should land close to them. Both see exactly what the system under
test sees (turn texts; question text), through the same :class:`~benchmarks.sut.RecallSystem`
interface, so every metric and guard applies unchanged.

* ``ref-dense``: cosine similarity of the engine's embeddings (all-MiniLM-L6-v2), exact.
* ``ref-bm25``: Okapi BM25 (k1 = 1.2, b = 0.75) over lower-cased alphanumeric tokens, English
  stop words removed.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks.sut import CorpusSession, Hit, IngestStats, QueryInput, Retrieval
from pipelines.ingest.text import embedding_input

REFERENCE_CONFIGS: tuple[str, ...] = ("ref-bm25", "ref-dense")
_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = (
    "a an and are as at be but by did do does for from had has have he her his how i if "
    "in is it its me my of on or our she so that the their them then there they this to "
    "was we were what when where which who why will with would you your"
)
STOP_WORDS = frozenset(_STOP.split())


def tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOP_WORDS]


@dataclass
class _Index:
    ids: list[str]
    sessions: list[str]
    texts: list[str]
    vectors: np.ndarray | None = None
    postings: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    lengths: list[int] = field(default_factory=list)


class ReferenceBaselines:
    """In-memory :class:`~benchmarks.sut.RecallSystem` with the configs ``ref-bm25`` and
    ``ref-dense``."""

    def __init__(self, embedder: Any, k1: float = 1.2, b: float = 0.75) -> None:
        self.embedder = embedder
        self.k1 = k1
        self.b = b
        self._spaces: dict[str, _Index] = {}

    def prepare(self, space: str, sessions: Sequence[CorpusSession]) -> IngestStats:
        t0 = time.perf_counter()
        ids, sess, texts, inputs = [], [], [], []
        for s in sessions:
            for t in s.turns:
                ids.append(t.id)
                sess.append(s.id)
                texts.append(t.content)
                inputs.append(embedding_input(t.content, t.speaker))
        idx = _Index(ids, sess, texts)
        # The same embedding input as the system under test ("speaker: text").
        idx.vectors = self.embedder.encode(inputs) if self.embedder is not None else None
        for i, text in enumerate(texts):
            tf = Counter(tokens(text))
            idx.lengths.append(sum(tf.values()))
            for term, f in tf.items():
                idx.postings.setdefault(term, []).append((i, f))
        self._spaces[space] = idx
        return IngestStats(
            turns=len(ids),
            seconds=time.perf_counter() - t0,
            memories=len(ids),
            sessions=len(sessions),
        )

    def pool_size(self, space: str) -> dict[str, int]:
        idx = self._spaces[space]
        return {"memories": len(idx.ids), "sessions": len(set(idx.sessions))}

    def drop(self, space: str) -> None:
        self._spaces.pop(space, None)

    def bm25_scores(self, idx: _Index, query: str) -> np.ndarray:
        n = len(idx.ids)
        avg = (sum(idx.lengths) / n) if n else 0.0
        scores = np.zeros(n)
        for term in set(tokens(query)):
            posting = idx.postings.get(term, [])
            df = len(posting)
            if not df:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for i, f in posting:
                norm = self.k1 * (1 - self.b + self.b * idx.lengths[i] / avg)
                scores[i] += idf * f * (self.k1 + 1) / (f + norm)
        return scores

    def recall(
        self, space: str, query: QueryInput, config: str, k: int, order: str | None = None
    ) -> Retrieval:
        """BM25 and dense ranks; ``order`` is accepted and moot (always rank order)."""
        idx = self._spaces[space]
        t0 = time.perf_counter()
        if config == "ref-dense":
            if idx.vectors is None:
                raise RuntimeError("ref-dense needs an embedder")
            q = self.embedder.encode([query.text])[0]
            scores = idx.vectors @ q
            ranked = np.argsort(-scores, kind="stable")[:k]
        elif config == "ref-bm25":
            scores = self.bm25_scores(idx, query.text)
            ranked = [i for i in np.argsort(-scores, kind="stable")[:k] if scores[i] > 0]
        else:
            raise ValueError(f"unknown reference config {config!r}: {REFERENCE_CONFIGS}")
        hits = [Hit(idx.ids[i], idx.sessions[i], idx.texts[i], float(scores[i])) for i in ranked]
        return Retrieval(hits=hits, latency_ms=(time.perf_counter() - t0) * 1000)
