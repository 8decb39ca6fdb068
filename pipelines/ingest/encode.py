"""Encoding new memories: one forward pass per text the model must read, long memories chunked.

A memory whose ``"speaker: content"`` fits the embedder's window (``max_tokens`` word pieces,
[CLS] and [SEP] included) is embedded whole, as before: it is its own single chunk and gets no
``Chunk`` nodes, so a short memory costs nothing extra. A longer memory is cut by
:func:`pipelines.ingest.chunking.chunk_spans` into chunks that fit the window with the same
speaker prefix, and every chunk is embedded (with its late-interaction token vectors); the
memory's own vector is the normalised mean of its chunks' vectors (the whole text, where the
model alone would read its first 256 word pieces), its token vectors those of its first chunk.

An embedder that cannot count word pieces (:class:`pipelines.models.embeddings.PieceCounter`)
embeds every memory whole (the model then reads its beginning only).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from pipelines.ingest.chunking import chunk_spans
from pipelines.ingest.config import IngestConfig
from pipelines.ingest.items import ChunkOut, Item
from pipelines.ingest.text import embedding_input
from pipelines.models.embeddings import Embedder, PieceCounter
from pipelines.models.late_interaction import pack

__all__ = ["ChunkEncoder"]

_MARKERS = 2  # [CLS] and [SEP]
_SLICE_BATCHES = 4  # model batches per slice of token vectors held at once


class ChunkEncoder:
    """Plans chunks and embeds new memories (module docstring)."""

    def __init__(self, embedder: Embedder, config: IngestConfig) -> None:
        self.embedder = embedder
        self.config = config
        self.counter = embedder if isinstance(embedder, PieceCounter) else None
        self._prefix_pieces: dict[str, int] = {}

    def _input(self, text: str, speaker: str | None) -> str:
        return embedding_input(text, speaker, with_speaker=self.config.embed_speaker)

    def _window(self, speaker: str | None) -> int:
        """Word pieces left for content once the markers and the speaker prefix are in."""
        assert self.counter is not None
        prefix = self._input("", speaker)
        if prefix not in self._prefix_pieces:
            self._prefix_pieces[prefix] = self.counter.count_pieces([prefix])[0] if prefix else 0
        return max(1, self.counter.max_tokens - _MARKERS - self._prefix_pieces[prefix])

    def plan(self, texts: Sequence[tuple[str, str | None]]) -> list[list[tuple[int, int]]]:
        """Per ``(content, speaker)``: its chunk spans, or ``[]`` when it fits the window."""
        out: list[list[tuple[int, int]]] = [[] for _ in texts]
        if self.counter is None:
            return out
        counter = self.counter
        # A text with no more characters than the window has no more pieces either.
        long = [i for i, (t, s) in enumerate(texts) if len(t) > self._window(s)]
        offsets = counter.piece_offsets([texts[i][0] for i in long])
        for i, pieces in zip(long, offsets, strict=True):
            text, speaker = texts[i]
            window = self._window(speaker)
            if len(pieces) > window:
                out[i] = chunk_spans(text, window, pieces, counter.count_pieces)
        return out

    def plan_items(self, items: Sequence[Item]) -> int:
        """Plan the chunks of the items not planned yet (kept for :meth:`encode`); the number of
        texts the model will read for all of them: one per memory that fits, one per chunk."""
        todo = [it for it in items if it.spans is None]
        for it, spans in zip(todo, self.plan([(it.text, it.speaker) for it in todo]), strict=True):
            it.spans = spans
        return sum(max(1, len(it.spans or ())) for it in items)

    def embedding_texts(self, texts: Sequence[tuple[str, str | None]]) -> list[str]:
        """Exactly the texts :meth:`encode` hands the model for these memories."""
        inputs: list[str] = []
        for (text, speaker), spans in zip(texts, self.plan(texts), strict=True):
            if spans:
                inputs.extend(self._input(text[s:e], speaker) for s, e in spans)
            else:
                inputs.append(self._input(text, speaker))
        return inputs

    def encode(self, items: Sequence[Item], check: Callable[[], None] | None = None) -> None:
        """Fill ``embedding``, ``tokens`` and ``chunks`` of each item (module docstring);
        ``check`` is called before each slice of the model's batches (it raises to stop)."""
        if not items:
            return
        self.plan_items(items)
        inputs: list[str] = []
        owners: list[tuple[Item, int]] = []  # (item, chunk index or -1 for the whole memory)
        for it in items:
            it.chunks = [
                ChunkOut(index=j, start=s, end=e, text=it.text[s:e])
                for j, (s, e) in enumerate(it.spans or ())
            ]
            if it.chunks:
                inputs.extend(self._input(c.text, it.speaker) for c in it.chunks)
                owners.extend((it, c.index) for c in it.chunks)
            else:
                inputs.append(self._input(it.text, it.speaker))
                owners.append((it, -1))
        vectors, packed = self._forward(inputs, check)
        for row, (it, j) in enumerate(owners):
            if j < 0:
                it.embedding, it.tokens = vectors[row], packed[row]
            else:
                it.chunks[j].embedding, it.chunks[j].tokens = vectors[row], packed[row]
        for it in items:
            if it.chunks:
                mean = np.mean([c.embedding for c in it.chunks if c.embedding is not None], axis=0)
                it.embedding = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
                it.tokens = it.chunks[0].tokens

    def _forward(
        self, inputs: list[str], check: Callable[[], None] | None = None
    ) -> tuple[npt.NDArray[np.float32], list[bytes | None]]:
        """Sentence vectors and packed token vectors, a slice of inputs at a time: the model's
        float token vectors (256 x 384 per text) are packed before the next slice runs, so a
        2 MB memory's thousands of chunks never hold them all at once. Inputs are sliced
        longest first, so that each model batch holds texts of about one length (as the bare
        embedder sorts a whole call), and returned in input order."""
        with_tokens = getattr(self.embedder, "encode_with_tokens", None)
        step = max(1, self.config.embedding_batch_size) * _SLICE_BATCHES
        order = sorted(range(len(inputs)), key=lambda i: -len(inputs[i]))
        vectors = np.zeros((len(inputs), self.embedder.dimensions), dtype=np.float32)
        packed: list[bytes | None] = [None] * len(inputs)
        for start in range(0, len(order), step):
            if check is not None:
                check()
            rows = order[start : start + step]
            texts = [inputs[i] for i in rows]
            if self.config.token_vectors and with_tokens is not None:
                out, tokens = with_tokens(texts)
                for i, t in zip(rows, tokens, strict=True):
                    packed[i] = pack(t)
            else:
                out = self.embedder.encode(texts)
            vectors[rows] = np.asarray(out, dtype=np.float32)
        return vectors, packed
