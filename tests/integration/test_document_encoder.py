"""The ONNX document encoder (ingest batches): PyTorch's vectors and token vectors on padded
batches of mixed lengths, cached per weights, and a loud fallback to PyTorch.

Uses the session's real models (the packaged all-MiniLM-L6-v2); no Neo4j needed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from pipelines.models.document_encoder import (
    MAX_DOC_PROBE_DIFF,
    document_export_path,
    load_document_encoder,
)
from pipelines.models.embeddings import SentenceTransformerEmbedder

#: Short, long enough to truncate, non-ASCII, code-like: padded together into one batch.
TEXTS = [
    "ok",
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "Émilie a visité Zürich et 東京 — twice! Ünïcödé, emoji 🎨 and CJK in one memory.",
    "assistant: " + "a long turn about the migration plan and its rollback steps " * 40,
    "SELECT * FROM memories WHERE id = 'x' -- code-like text",
    "user: " + "word " * 120,
    "Melanie: painted a sunrise after the camping trip in June 2023",
    "yes",
    "数据库迁移计划的回滚步骤 " * 30,
    "Bob: the cello lesson moved to Thursday at 5 pm",
]


@pytest.fixture(scope="module")
def embedder(models) -> SentenceTransformerEmbedder:
    emb = models.embedder
    assert isinstance(emb, SentenceTransformerEmbedder)
    return emb


@contextmanager
def on_torch(emb: SentenceTransformerEmbedder) -> Iterator[None]:
    """The embedder's batch path with the ONNX document encoder set aside (PyTorch)."""
    saved, emb._doc = emb._doc, None
    try:
        yield
    finally:
        emb._doc = saved


def _load(emb: SentenceTransformerEmbedder, cache: Path, reference=None):
    return load_document_encoder(
        emb._model,
        emb._batch_ids,
        reference or emb._torch_batch,
        emb.path,
        emb.name,
        cache,
    )


@pytest.fixture(scope="module")
def export_dir(embedder, tmp_path_factory) -> Path:
    """One export for the module's cache tests (exports cost seconds)."""
    cache = tmp_path_factory.mktemp("doc-export")
    enc, status = _load(embedder, cache)
    assert enc is not None and status.active and "exported to" in status.detail, status.detail
    return cache


def test_batches_run_on_onnxruntime_by_default(embedder, models):
    status = embedder.document_encoder_status
    assert status.active, status.detail
    assert "batches on onnxruntime" in status.detail
    detail = next(s.detail for s in models.statuses if s.name.startswith("embeddings:"))
    assert "batches on onnxruntime" in detail and "queries on onnxruntime" in detail


def test_onnx_batches_equal_pytorch_batches(embedder):
    texts = TEXTS * 2  # beyond direct_max: the batch path, padded to mixed lengths
    vec_o, tok_o = embedder.encode_with_tokens(texts)
    with on_torch(embedder):
        vec_t, tok_t = embedder.encode_with_tokens(texts)
    assert vec_o.shape == vec_t.shape == (len(texts), embedder.dimensions)
    assert vec_o.dtype == np.float32
    assert float(np.abs(vec_o - vec_t).max()) < 1e-5
    assert np.allclose(np.linalg.norm(vec_o, axis=1), 1.0, atol=1e-5)
    for a, b in zip(tok_o, tok_t, strict=True):
        assert a.shape == b.shape and a.shape[0] > 0
        assert float(np.abs(a - b).max()) < 1e-4
    # the truncated text has a full window of token vectors, the same as alone
    alone_v, alone_t = embedder.encode_with_tokens([TEXTS[3]] * 9)
    assert float(np.abs(alone_v[0] - vec_o[3]).max()) < 1e-5
    assert alone_t[0].shape == tok_o[3].shape


def test_onnx_encode_equals_pytorch_encode(embedder):
    texts = TEXTS * 3
    onnx = embedder.encode(texts)
    with on_torch(embedder):
        torch = embedder.encode(texts)
    assert onnx.shape == torch.shape == (len(texts), embedder.dimensions)
    assert float(np.abs(onnx - torch).max()) < 1e-5
    # and a query-sized call (the query encoder) gives the batch's vectors
    assert float(np.abs(embedder.encode(TEXTS[:3]) - onnx[:3]).max()) < 1e-5


def test_padding_does_not_change_a_vector(embedder):
    """The same text alone in its batch and padded beside a much longer one."""
    short = [TEXTS[1]] * 9
    padded = [TEXTS[3]] + [TEXTS[1]] * 8
    a, ta = embedder.encode_with_tokens(short)
    b, tb = embedder.encode_with_tokens(padded)
    assert float(np.abs(a[0] - b[1]).max()) < 1e-5
    assert ta[0].shape == tb[1].shape and float(np.abs(ta[0] - tb[1]).max()) < 1e-4


def test_the_export_is_cached_per_weights(embedder, export_dir):
    path = document_export_path(export_dir, embedder.path, embedder.name)
    assert [p.name for p in export_dir.glob("*.onnx")] == [path.name]
    mtime = path.stat().st_mtime_ns
    enc, status = _load(embedder, export_dir)
    assert enc is not None and "cached at" in status.detail
    assert path.stat().st_mtime_ns == mtime  # reused, not exported again
    assert not list(export_dir.glob("*.tmp"))  # no half-written export left behind


def test_an_export_that_disagrees_with_pytorch_is_refused(embedder, export_dir):
    def wrong_reference(texts):
        vec, tok = embedder._torch_batch(texts)
        return vec, tok + 0.01  # token vectors off by more than the tolerance

    enc, status = _load(embedder, export_dir, reference=wrong_reference)
    assert enc is None and not status.active
    assert "batches on PyTorch" in status.detail and "differs from PyTorch" in status.detail
    assert f"{MAX_DOC_PROBE_DIFF:.0e}" in status.detail


def test_an_unwritable_cache_falls_back_to_pytorch(embedder, tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory should be")
    enc, status = _load(embedder, blocker)
    assert enc is None and "batches on PyTorch" in status.detail


def test_a_corrupt_export_leaves_the_embedder_on_pytorch(embedder, tmp_path):
    """The whole embedder, started on a cache holding a broken export: ready, batches on
    PyTorch (readiness says why), the same vectors."""
    path = document_export_path(tmp_path, embedder.path, embedder.name)
    path.write_bytes(b"not an onnx model")
    fallback = SentenceTransformerEmbedder(query_encoder="torch", cache_dir=tmp_path)
    status = fallback.document_encoder_status
    assert not status.active and "ONNX unavailable" in status.detail
    vec, tok = fallback.encode_with_tokens(TEXTS)
    want, want_tok = embedder.encode_with_tokens(TEXTS)
    assert float(np.abs(vec - want).max()) < 1e-5
    assert [t.shape for t in tok] == [t.shape for t in want_tok]


def test_an_unknown_document_encoder_is_refused():
    with pytest.raises(ValueError, match="document_encoder"):
        SentenceTransformerEmbedder(document_encoder="tensorrt")
