"""The embedding model on onnxruntime: exported once per weights, cached, checked at load.

Both ONNX encoders (:mod:`pipelines.models.query_encoder`, one text at a time, and
:mod:`pipelines.models.document_encoder`, padded batches) share this scaffolding: the cache
(``<cache>/<model>-<weights hash>...onnx``), a quiet export written beside its path and renamed
into place, a CPU session whose threads never spin, and a load that compares the encoder with
PyTorch on probe texts and, on any failure or difference, keeps PyTorch and says why.
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
from typing import Any, TypeVar

log = logging.getLogger("mnemograph.models")

#: Bumped when the exported graphs change, so stale cache files are not reused (it seeds the
#: weights hash in every export's file name).
EXPORT_VERSION = 2
#: Texts the ONNX encoders must reproduce at load (short, long enough to truncate, non-ASCII).
PROBE_TEXTS = (
    "readiness probe",
    "When did Caroline go to the LGBTQ support group?",
    "Émilie a visité Zürich et 東京 — twice!",
    "a long turn about nothing in particular " * 60,
)

E = TypeVar("E")


@dataclass(frozen=True)
class EncoderStatus:
    """Whether an optional encoder is active, and a line for readiness saying why."""

    active: bool
    detail: str


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


def eager_copy(transformer: Any) -> Any:
    """A deep copy of a Hugging Face encoder with eager attention (the live model is not
    touched; the other attention implementations do not trace)."""
    model = copy.deepcopy(transformer).eval()
    model.set_attn_implementation("eager")
    return model


def export_graph(
    module: Any, args: tuple[Any, ...], path: Path, inputs: list[str], axes: dict[str, Any]
) -> None:
    """``torch.onnx.export`` of ``module`` on ``args`` to ``path``, outputs ``embedding`` and
    ``tokens``, quietly; written beside ``path`` and renamed into place, so concurrent exports
    never leave a half-written model behind."""
    import torch

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
                module,
                args,
                str(tmp),
                input_names=inputs,
                output_names=["embedding", "tokens"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def cpu_session(path: Path, threads: int) -> Any:
    """An onnxruntime CPU session on ``threads`` threads that never spin between runs: idle
    threads that spin take CPU from Neo4j and the read path on a 2-core machine."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


@dataclass(frozen=True)
class Export:
    """How to get one ONNX encoder: ``locate()`` its cache path, ``export(path)`` when the
    file is missing, ``open(path)`` the encoder, ``difference(encoder)`` from PyTorch on the
    probes (at most ``max_diff``); ``kind``/``inputs`` name it in logs and readiness
    ("query"/"queries", "document"/"batches")."""

    kind: str
    inputs: str
    locate: Callable[[], Path]
    export: Callable[[Path], None]
    max_diff: float


def load_checked(
    spec: Export, open_encoder: Callable[[Path], E], difference: Callable[[E], float]
) -> tuple[E | None, EncoderStatus]:
    """Export (once) and load an encoder, checked against PyTorch; any failure or a difference
    over ``spec.max_diff`` returns ``None`` and the reason (the caller keeps PyTorch)."""
    try:
        path = spec.locate()
        exported = False
        if not path.exists():
            spec.export(path)
            exported = True
        encoder = open_encoder(path)
        diff = difference(encoder)
    except Exception as exc:  # any failure means: stay on PyTorch, and say why
        log.warning("ONNX %s encoder unavailable, %s use PyTorch: %s", spec.kind, spec.inputs, exc)
        return None, EncoderStatus(False, f"{spec.inputs} on PyTorch (ONNX unavailable: {exc})")
    if diff > spec.max_diff:
        return None, EncoderStatus(
            False,
            f"{spec.inputs} on PyTorch (ONNX export differs from PyTorch by {diff:.2e} "
            f"> {spec.max_diff:.0e} on the probes)",
        )
    how = "exported to" if exported else "cached at"
    return encoder, EncoderStatus(
        True, f"{spec.inputs} on onnxruntime ({how} {path}; max difference {diff:.1e} on probes)"
    )
