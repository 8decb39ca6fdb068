"""The query-embedding memo of context assembly.

One assembly embeds the same query several times (the stage-summary similarity, whole-space
recall, Phase 1's recall); :class:`MemoEmbedder` wraps the engine's embedder with a small LRU
memo so each text is embedded once.  The assembler hands it to its Recaller explicitly.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from pipelines.models.embeddings import Embedder

__all__ = ["MemoEmbedder"]


class MemoEmbedder:
    """``inner`` with an LRU memo of ``size`` texts (vectors and, when ``inner`` has
    ``encode_with_tokens``, late-interaction token vectors from the same forward pass).
    Thread-safe."""

    def __init__(self, inner: Embedder, size: int = 512) -> None:
        self.inner = inner
        self.size = size
        self.name = inner.name
        self.dimensions = int(inner.dimensions)
        self._memo: OrderedDict[str, tuple[np.ndarray, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode_with_tokens(texts)[0]

    def encode_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[Any]]:
        """Vectors and token vectors (``None`` for each text when the inner embedder has no
        ``encode_with_tokens``).  Both come from one forward pass, so the memo keeps both
        whatever was asked first."""
        texts = list(texts)
        if not texts:
            return self.inner.encode(texts), []
        with self._lock:
            found = {t: self._memo[t] for t in texts if t in self._memo}
            for t in found:
                self._memo.move_to_end(t)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            with_tokens = getattr(self.inner, "encode_with_tokens", None)
            tokens: Sequence[Any]
            if with_tokens is not None:
                vectors, tokens = with_tokens(missing)
            else:
                vectors, tokens = self.inner.encode(missing), [None] * len(missing)
            with self._lock:
                for t, v, tok in zip(missing, vectors, tokens, strict=True):
                    found[t] = (v, tok)
                    self._memo[t] = (v, tok)
                    self._memo.move_to_end(t)
                while len(self._memo) > self.size:
                    self._memo.popitem(last=False)
        return np.stack([found[t][0] for t in texts]), [found[t][1] for t in texts]
