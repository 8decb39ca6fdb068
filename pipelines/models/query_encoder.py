"""A fast path for short texts (a recall query): the embedding model run by onnxruntime.

Embedding the query is on the critical path of every recall and context call. PyTorch on two
CPU cores takes 11 to 15 ms for a 13-token query with all-MiniLM-L6-v2; onnxruntime runs the
same network in about 6 ms on one thread. Nothing is downloaded: the packaged model's transformer is
exported to ONNX once, on this machine, and cached (``<cache>/<model>-<weights hash>.onnx``).

The exported graph takes the token ids of ONE text (no padding, so no attention mask: the
mask handling of ``transformers`` does not survive tracing) and returns the mean-pooled,
L2-normalised embedding, the same computation as the sentence-transformers pipeline
(Transformer -> mean Pooling -> Normalize), and the last layer's token vectors (for late
interaction, :mod:`pipelines.models.late_interaction`). At load the encoder is checked
against PyTorch on probe texts; if the export or the check fails, queries stay on PyTorch
and readiness says why (the shared export, cache and check: :mod:`pipelines.models.onnx_export`).
Batches (ingest) run on the document encoder, :mod:`pipelines.models.document_encoder`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pipelines.models.onnx_export import (
    EXPORT_VERSION,
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

__all__ = [
    "EXPORT_VERSION",
    "MAX_PROBE_DIFF",
    "PROBE_TEXTS",
    "OnnxQueryEncoder",
    "QueryEncoderStatus",
    "default_cache_dir",
    "export_onnx",
    "load_query_encoder",
    "weights_digest",
]

#: Largest element-wise difference from PyTorch accepted at load (observed: about 2e-7).
MAX_PROBE_DIFF = 1e-4
#: Readiness of the query encoder (the shared status type).
QueryEncoderStatus = EncoderStatus


def export_onnx(transformer: Any, example_ids: Any, path: Path) -> None:
    """Export ``transformer`` (a Hugging Face encoder) as ids -> (normalised mean embedding,
    token vectors), from an eager copy (:func:`pipelines.models.onnx_export.eager_copy`)."""
    import torch

    class _Encoder(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            hidden = self.inner(
                input_ids=input_ids, attention_mask=torch.ones_like(input_ids)
            ).last_hidden_state
            return torch.nn.functional.normalize(hidden.mean(dim=1), p=2, dim=1), hidden[0]

    export_graph(
        _Encoder(eager_copy(transformer)),
        (example_ids,),
        path,
        ["input_ids"],
        {"input_ids": {1: "tokens"}, "tokens": {0: "tokens"}},
    )


class OnnxQueryEncoder:
    """One text's token ids -> its L2-normalised embedding (and, on request, its token
    vectors), with onnxruntime on the CPU."""

    def __init__(self, path: Path, threads: int = 1) -> None:
        # One thread, no spinning. With two threads a 13-token query takes 4.3 ms instead of
        # 6.2, but the pool's threads spin after each run: 19 ms of CPU per query, taken from
        # Neo4j on a 2-core machine. Without spinning, two threads are no faster than one.
        self.path = path
        self._session = cpu_session(path, threads)

    def encode_ids(self, input_ids: np.ndarray) -> np.ndarray:
        """``input_ids``: shape (1, tokens), int64. Returns shape (dims,), float32."""
        out = self._session.run(
            ["embedding"], {"input_ids": input_ids.astype(np.int64, copy=False)}
        )
        return np.asarray(out[0][0], dtype=np.float32)

    def encode_ids_tokens(self, input_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`encode_ids`, plus the last layer's token vectors, shape (tokens, dims)."""
        out = self._session.run(None, {"input_ids": input_ids.astype(np.int64, copy=False)})
        return np.asarray(out[0][0], dtype=np.float32), np.asarray(out[1], dtype=np.float32)


def load_query_encoder(
    st_model: Any,
    ids_of: Callable[[str], np.ndarray],
    reference: Callable[[list[str]], np.ndarray],
    model_dir: Path,
    name: str,
    cache_dir: Path | None,
) -> tuple[OnnxQueryEncoder | None, QueryEncoderStatus]:
    """Export (once) and load the ONNX query encoder, checked against PyTorch.

    ``st_model`` is the sentence-transformers model (its first module's Hugging Face encoder
    is exported); ``ids_of(text)`` gives one text's token ids, shape (1, tokens);
    ``reference(texts)`` gives PyTorch's normalised embeddings for the probe check. Any
    failure returns ``None`` and the reason; the caller keeps PyTorch.
    """
    cache = cache_dir or default_cache_dir()

    def export(path: Path) -> None:
        import torch

        export_onnx(st_model[0].auto_model, torch.from_numpy(ids_of(PROBE_TEXTS[1])), path)

    def difference(encoder: OnnxQueryEncoder) -> float:
        expected = reference(list(PROBE_TEXTS))
        got = np.stack([encoder.encode_ids(ids_of(t)) for t in PROBE_TEXTS])
        return float(np.abs(got - expected).max())

    spec = Export(
        kind="query",
        inputs="queries",
        locate=lambda: cache / f"{name}-{weights_digest(model_dir)}.onnx",
        export=export,
        max_diff=MAX_PROBE_DIFF,
    )
    return load_checked(spec, OnnxQueryEncoder, difference)
