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
and readiness says why. Batches (ingest) always run on PyTorch, where padding and batching pay.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import logging
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger("mnemograph.models")

#: Bumped when the exported graph changes, so stale cache files are not reused.
EXPORT_VERSION = 2
#: Texts the ONNX encoder must reproduce at load (short, long enough to truncate, non-ASCII).
PROBE_TEXTS = (
    "readiness probe",
    "When did Caroline go to the LGBTQ support group?",
    "Émilie a visité Zürich et 東京 — twice!",
    "a long turn about nothing in particular " * 60,
)
#: Largest element-wise difference from PyTorch accepted at load (observed: about 2e-7).
MAX_PROBE_DIFF = 1e-4


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/mnemograph`` (default ``~/.cache/mnemograph``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mnemograph"


def weights_digest(model_dir: Path) -> str:
    """A short content hash of the model's weight files (an export is tied to the weights)."""
    h = hashlib.sha256(f"export-v{EXPORT_VERSION}".encode())
    files = sorted(
        p for p in model_dir.rglob("*") if p.suffix in {".safetensors", ".bin"} and p.is_file()
    )
    if not files:
        raise FileNotFoundError(f"no weight files (*.safetensors, *.bin) under {model_dir}")
    for p in files:
        h.update(p.relative_to(model_dir).as_posix().encode())
        with p.open("rb") as f:
            h.update(hashlib.file_digest(f, "sha256").digest())
    return h.hexdigest()[:16]


def export_onnx(transformer: Any, example_ids: Any, path: Path) -> None:
    """Export ``transformer`` (a Hugging Face encoder) as ids -> (normalised mean embedding,
    token vectors).

    A deep copy is exported with eager attention, so the live model is not touched. The file
    is written next to ``path`` and renamed into place: concurrent exports never leave a
    half-written model behind.
    """
    import torch

    model = copy.deepcopy(transformer).eval()
    model.set_attn_implementation("eager")

    class _Encoder(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            hidden = self.inner(
                input_ids=input_ids, attention_mask=torch.ones_like(input_ids)
            ).last_hidden_state
            return torch.nn.functional.normalize(hidden.mean(dim=1), p=2, dim=1), hidden[0]

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stdout(io.StringIO()),
            torch.inference_mode(),
        ):
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Encoder(model),
                (example_ids,),
                str(tmp),
                input_names=["input_ids"],
                output_names=["embedding", "tokens"],
                dynamic_axes={"input_ids": {1: "tokens"}, "tokens": {0: "tokens"}},
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


class OnnxQueryEncoder:
    """One text's token ids -> its L2-normalised embedding (and, on request, its token
    vectors), with onnxruntime on the CPU."""

    def __init__(self, path: Path, threads: int = 1) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        # One thread, no spinning. With two threads a 13-token query takes 4.3 ms instead of
        # 6.2, but the pool's threads spin after each run: 19 ms of CPU per query, taken from
        # Neo4j on a 2-core machine. Without spinning, two threads are no faster than one.
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        options.log_severity_level = 3
        self.path = path
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

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


@dataclass(frozen=True)
class QueryEncoderStatus:
    active: bool
    detail: str


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
    try:
        path = cache / f"{name}-{weights_digest(model_dir)}.onnx"
        exported = False
        if not path.exists():
            import torch

            example = torch.from_numpy(ids_of(PROBE_TEXTS[1]))
            export_onnx(st_model[0].auto_model, example, path)
            exported = True
        encoder = OnnxQueryEncoder(path)
        expected = reference(list(PROBE_TEXTS))
        got = np.stack([encoder.encode_ids(ids_of(t)) for t in PROBE_TEXTS])
        diff = float(np.abs(got - expected).max())
    except Exception as exc:  # any failure means: stay on PyTorch, and say why
        log.warning("ONNX query encoder unavailable, queries use PyTorch: %s", exc)
        return None, QueryEncoderStatus(False, f"queries on PyTorch (ONNX unavailable: {exc})")
    if diff > MAX_PROBE_DIFF:
        return None, QueryEncoderStatus(
            False,
            f"queries on PyTorch (ONNX export differs from PyTorch by {diff:.2e} "
            f"> {MAX_PROBE_DIFF:.0e} on the probes)",
        )
    how = "exported to" if exported else "cached at"
    return encoder, QueryEncoderStatus(
        True, f"queries on onnxruntime ({how} {path}; max difference {diff:.1e} on probes)"
    )
