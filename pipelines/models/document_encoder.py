"""Batches of texts (ingest) on onnxruntime: the embedding model with padding and a mask.

Ingest embeds every memory (and every chunk of a long one) in padded batches, and that forward
pass bounds its speed. onnxruntime runs the same network in about half the CPU time PyTorch
takes on the same batches (``python -m benchmarks.encoders``). The packaged model's
transformer is exported once, on this machine, and cached
(``<cache>/<model>-<weights hash>-doc-v<version>.onnx``), next to the query export.

The graph takes ``input_ids`` and ``attention_mask`` (texts, positions) and returns the
mask-weighted mean of the last layer, L2-normalised (sentence-transformers' Transformer ->
mean Pooling -> Normalize), and the last layer itself (texts, positions, dims: the token
vectors of late interaction). The mask is applied explicitly: the transformer's own mask
construction does not trace, so the export calls its embedding and encoder modules with the
additive (texts, 1, 1, positions) mask eager attention takes. At load the encoder is checked
against PyTorch on a padded probe batch; if the export or the check fails, batches stay on
PyTorch and readiness says why (the shared scaffolding: :mod:`pipelines.models.onnx_export`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from pipelines.models.onnx_export import (
    PROBE_TEXTS,
    EncoderStatus,
    Export,
    cpu_session,
    default_cache_dir,
    eager_copy,
    export_graph,
    load_checked,
    weights_digest,
)

#: Bumped when the exported graph changes, so stale cache files are not reused.
DOC_EXPORT_VERSION = 1
#: Largest element-wise difference from PyTorch accepted at load (observed: about 5e-7).
MAX_DOC_PROBE_DIFF = 1e-4
#: Texts of mixed lengths embedded together at load: padding must not change any vector.
DOC_PROBE_TEXTS = (*PROBE_TEXTS, "ok", "Ünïcödé, emoji 🎨 and CJK 東京 " * 3)
#: Readiness of the document encoder (the shared status type).
DocumentEncoderStatus = EncoderStatus

#: ``tokenize(texts)`` -> (input_ids, attention_mask), int64, padded to the longest text.
Tokenize = Callable[[list[str]], tuple[np.ndarray, np.ndarray]]
#: ``reference(texts)`` -> PyTorch's (normalised embeddings, last-layer token vectors).
Reference = Callable[[list[str]], tuple[np.ndarray, np.ndarray]]


class BatchEncoder(Protocol):
    """What the embedder's batch path runs a padded batch on (this module's ONNX encoder, or
    :class:`pipelines.models.bf16_encoder.Bf16DocumentEncoder`)."""

    def encode(self, input_ids: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Shapes (texts, positions) in; (texts, dims) and (texts, positions, dims) out."""
        ...


def export_document_onnx(transformer: Any, ids: Any, mask: Any, path: Path) -> None:
    """Export ``transformer`` (a Hugging Face BERT-style encoder) as (ids, mask) ->
    (normalised masked mean, token vectors), from an eager copy."""
    import torch

    class _Documents(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor
        ) -> tuple[torch.Tensor, torch.Tensor]:
            hidden = self.inner.embeddings(input_ids=input_ids)
            weight = attention_mask.to(hidden.dtype)
            # Additive mask: 0 where a position is read, the dtype's minimum where it is padding.
            additive = (1.0 - weight[:, None, None, :]) * torch.finfo(hidden.dtype).min
            hidden = self.inner.encoder(hidden, attention_mask=additive).last_hidden_state
            w = weight.unsqueeze(-1)
            mean = (hidden * w).sum(dim=1) / w.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1), hidden

    axes = {0: "texts", 1: "positions"}
    export_graph(
        _Documents(eager_copy(transformer)),
        (ids, mask),
        path,
        ["input_ids", "attention_mask"],
        {"input_ids": axes, "attention_mask": axes, "embedding": {0: "texts"}, "tokens": axes},
    )


class OnnxDocumentEncoder:
    """A padded batch's (ids, mask) -> (normalised embeddings, token vectors) on the CPU."""

    def __init__(self, path: Path, threads: int = 2) -> None:
        # Both cores for a batch, but no spinning between runs (the query encoder's reasoning).
        self.path = path
        self._session = cpu_session(path, threads)

    def encode(self, input_ids: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Shapes (texts, positions) in; (texts, dims) and (texts, positions, dims) out."""
        out = self._session.run(
            None,
            {
                "input_ids": input_ids.astype(np.int64, copy=False),
                "attention_mask": mask.astype(np.int64, copy=False),
            },
        )
        return np.asarray(out[0], dtype=np.float32), np.asarray(out[1], dtype=np.float32)


def document_export_path(cache: Path, model_dir: Path, name: str) -> Path:
    """Where the document export of these weights is cached."""
    return cache / f"{name}-{weights_digest(model_dir)}-doc-v{DOC_EXPORT_VERSION}.onnx"


def probe_difference(
    encoder: OnnxDocumentEncoder, tokenize: Tokenize, reference: Reference
) -> float:
    """Largest difference from PyTorch on the probe batch: embeddings, and token vectors at
    every unpadded position."""
    texts = list(DOC_PROBE_TEXTS)
    ids, mask = tokenize(texts)
    got_vec, got_tok = encoder.encode(ids, mask)
    want_vec, want_tok = reference(texts)
    read = mask.astype(bool)
    return max(
        float(np.abs(got_vec - want_vec).max()),
        float(np.abs(got_tok[read] - want_tok[read]).max()),
    )


def load_document_encoder(
    st_model: Any,
    tokenize: Tokenize,
    reference: Reference,
    model_dir: Path,
    name: str,
    cache_dir: Path | None,
) -> tuple[OnnxDocumentEncoder | None, DocumentEncoderStatus]:
    """Export (once) and load the ONNX document encoder, checked against PyTorch; any failure
    returns ``None`` and the reason (the caller keeps PyTorch)."""
    cache = cache_dir or default_cache_dir()

    def export(path: Path) -> None:
        import torch

        ids, mask = tokenize(list(DOC_PROBE_TEXTS[:2]))
        export_document_onnx(
            st_model[0].auto_model, torch.from_numpy(ids), torch.from_numpy(mask), path
        )

    spec = Export(
        kind="document",
        inputs="batches",
        locate=lambda: document_export_path(cache, model_dir, name),
        export=export,
        max_diff=MAX_DOC_PROBE_DIFF,
    )
    return load_checked(
        spec, OnnxDocumentEncoder, lambda enc: probe_difference(enc, tokenize, reference)
    )
