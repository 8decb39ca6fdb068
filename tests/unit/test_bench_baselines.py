"""In-memory reference baselines (exact dense, BM25) behind the RecallSystem interface."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.baselines import ReferenceBaselines, tokens
from benchmarks.sut import CorpusSession, CorpusTurn, QueryInput


class BagOfLetters:
    """A deterministic toy embedder: normalised letter counts."""

    def encode(self, texts):
        out = np.zeros((len(texts), 26), dtype=np.float32)
        for i, t in enumerate(texts):
            for ch in t.lower():
                if "a" <= ch <= "z":
                    out[i, ord(ch) - 97] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def corpus():
    return [
        CorpusSession(
            "s1",
            (
                CorpusTurn("t1", "user", "A", "the cat sat on the mat"),
                CorpusTurn("t2", "assistant", "B", "dogs bark loudly"),
            ),
        ),
        CorpusSession("s2", (CorpusTurn("t3", "user", "A", "a cat and a cat and a dog"),)),
    ]


def test_tokens_drop_stop_words_and_punctuation():
    assert tokens("The cat, and THE dog!") == ["cat", "dog"]


def test_bm25_matches_hand_computation():
    sys = ReferenceBaselines(None)
    sys.prepare("x", corpus())
    r = sys.recall("x", QueryInput("cat", None), "ref-bm25", 10)
    assert [h.id for h in r.hits] == ["t3", "t1"]  # "dogs bark loudly" has no "cat": left out
    # by hand: n = 3, df(cat) = 2, lengths (stop words removed) = [3, 3, 3]: avg 3
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    t3 = idf * 2 * 2.2 / (2 + 1.2)  # tf 2 ("cat" twice)
    t1 = idf * 1 * 2.2 / (1 + 1.2)
    assert [h.score for h in r.hits] == pytest.approx([t3, t1])
    assert [h.session_id for h in r.hits] == ["s2", "s1"]


def test_dense_is_exact_cosine_and_pool_size():
    sys = ReferenceBaselines(BagOfLetters())
    stats = sys.prepare("x", corpus())
    assert stats.memories == 3 and sys.pool_size("x") == {"memories": 3, "sessions": 2}
    r = sys.recall("x", QueryInput("dogs bark", None), "ref-dense", 2)
    assert r.hits[0].id == "t2" and len(r.hits) == 2
    sys.drop("x")
    with pytest.raises(KeyError):
        sys.pool_size("x")
    sys.prepare("y", corpus())
    with pytest.raises(ValueError, match="unknown reference config"):
        sys.recall("y", QueryInput("q", None), "nope", 1)
