"""Batches of texts (ingest) on PyTorch in bfloat16: opt-in, ``document_encoder="bf16"``.

On a CPU with bfloat16 matrix units (AMX, AVX-512 BF16) the transformer cast to bfloat16 runs a
padded batch in about half the CPU time of the ONNX document encoder
(:mod:`pipelines.models.document_encoder`; ``python -m benchmarks.encoders``). The vectors are
not PyTorch's float32 ones to float precision but close: the masked mean is pooled and
normalised in float32 from the bfloat16 last layer. At load a padded batch of probe texts is
encoded by both; every sentence vector must be at cosine >= :data:`MIN_PROBE_COSINE` to
float32's, else a warning is logged and the caller falls back to the default encoder.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

import numpy as np

from pipelines.models.document_encoder import DOC_PROBE_TEXTS, Reference, Tokenize
from pipelines.models.onnx_export import EncoderStatus

log = logging.getLogger("mnemograph.models")

#: Smallest cosine to float32 PyTorch accepted on the probe batch (observed: 0.99994).
MIN_PROBE_COSINE = 0.999


class Bf16DocumentEncoder:
    """A padded batch's (ids, mask) -> (normalised embeddings, token vectors), float32 out,
    from a bfloat16 copy of the transformer (the live float32 model is not touched)."""

    def __init__(self, transformer: Any) -> None:
        import torch

        self._model = copy.deepcopy(transformer).to(torch.bfloat16).eval()

    def encode(self, input_ids: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Shapes (texts, positions) in; (texts, dims) and (texts, positions, dims) out."""
        import torch

        ids = torch.from_numpy(input_ids.astype(np.int64, copy=False))
        attention = torch.from_numpy(mask.astype(np.int64, copy=False))
        with torch.inference_mode():
            out = self._model(input_ids=ids, attention_mask=attention)
            hidden = out.last_hidden_state.float()
            weight = attention.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * weight).sum(dim=1) / weight.sum(dim=1).clamp(min=1e-9)
            sent = torch.nn.functional.normalize(mean, p=2, dim=1)
        return sent.numpy(), hidden.numpy()


def probe_cosine(encoder: Bf16DocumentEncoder, tokenize: Tokenize, reference: Reference) -> float:
    """The smallest cosine between this encoder's and float32 PyTorch's sentence vectors on the
    probe batch (both normalised)."""
    texts = list(DOC_PROBE_TEXTS)
    got, _ = encoder.encode(*tokenize(texts))
    want, _ = reference(texts)
    return float((got * want).sum(axis=1).min())


def load_bf16_encoder(
    st_model: Any, tokenize: Tokenize, reference: Reference
) -> tuple[Bf16DocumentEncoder | None, EncoderStatus]:
    """The bfloat16 encoder of ``st_model``'s transformer, checked against float32 on the
    probes; ``None`` and the reason when it fails or disagrees (the caller falls back)."""
    try:
        encoder = Bf16DocumentEncoder(st_model[0].auto_model)
        cosine = probe_cosine(encoder, tokenize, reference)
    except Exception as exc:  # any failure means: the default encoder, and say why
        log.warning("bfloat16 document encoder unavailable: %s", exc)
        return None, EncoderStatus(False, f"bfloat16 unavailable ({exc})")
    if cosine < MIN_PROBE_COSINE:
        log.warning(
            "bfloat16 document encoder refused: cosine %.5f to float32 < %s on the probes",
            cosine,
            MIN_PROBE_COSINE,
        )
        return None, EncoderStatus(
            False, f"bfloat16 refused (cosine {cosine:.5f} < {MIN_PROBE_COSINE} on the probes)"
        )
    return encoder, EncoderStatus(
        True, f"batches on PyTorch bfloat16 (cosine >= {cosine:.5f} to float32 on the probes)"
    )
