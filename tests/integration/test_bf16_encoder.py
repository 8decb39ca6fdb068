"""The opt-in bfloat16 document encoder: close to float32 on padded batches of mixed lengths,
checked at load, and a loud fallback to the default ONNX encoder when the check fails.

Uses the session's real models (the packaged all-MiniLM-L6-v2); no Neo4j needed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipelines.models import bf16_encoder
from pipelines.models.bf16_encoder import MIN_PROBE_COSINE, load_bf16_encoder
from pipelines.models.embeddings import SentenceTransformerEmbedder

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
def default(models) -> SentenceTransformerEmbedder:
    emb = models.embedder
    assert isinstance(emb, SentenceTransformerEmbedder)
    return emb


@pytest.fixture(scope="module")
def bf16(default, tmp_path_factory) -> SentenceTransformerEmbedder:
    cache = tmp_path_factory.mktemp("bf16")
    return SentenceTransformerEmbedder(
        query_encoder="torch", document_encoder="bf16", cache_dir=cache
    )


def test_bf16_is_active_when_asked_for_and_says_so(bf16):
    status = bf16.document_encoder_status
    assert status.active, status.detail
    assert "batches on PyTorch bfloat16" in status.detail


def test_bf16_batches_are_close_to_float32(default, bf16):
    texts = TEXTS * 2  # beyond direct_max: the batch path, padded to mixed lengths
    vec_b, tok_b = bf16.encode_with_tokens(texts)
    vec_f, tok_f = default.encode_with_tokens(texts)
    assert vec_b.shape == vec_f.shape == (len(texts), default.dimensions)
    assert vec_b.dtype == np.float32
    assert np.allclose(np.linalg.norm(vec_b, axis=1), 1.0, atol=1e-5)
    assert float((vec_b * vec_f).sum(axis=1).min()) >= MIN_PROBE_COSINE
    for a, b in zip(tok_b, tok_f, strict=True):
        assert a.shape == b.shape and a.shape[0] > 0
        assert float((a * b).sum(axis=1).min()) > 0.99  # token vectors are normalised rows
    # plain encode takes the same path
    assert float((bf16.encode(texts) * vec_f).sum(axis=1).min()) >= MIN_PROBE_COSINE


def test_padding_does_not_change_a_bf16_vector_beyond_rounding(bf16):
    a, _ = bf16.encode_with_tokens([TEXTS[1]] * 9)
    b, _ = bf16.encode_with_tokens([TEXTS[3]] + [TEXTS[1]] * 8)
    assert float(a[0] @ b[1]) > 0.9999


def test_a_bf16_encoder_that_disagrees_is_refused(default):
    def wrong(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        vec, tok = default._torch_batch(texts)
        return np.roll(vec, 1, axis=0), tok  # every row compared with another text's vector

    enc, status = load_bf16_encoder(default._model, default._batch_ids, wrong)
    assert enc is None and not status.active
    assert "bfloat16 refused" in status.detail and str(MIN_PROBE_COSINE) in status.detail


def test_a_refused_bf16_falls_back_to_onnx(default, tmp_path: Path, monkeypatch, caplog):
    """The whole embedder: a check it cannot pass leaves batches on the ONNX encoder, with a
    warning and readiness saying both."""
    monkeypatch.setattr(bf16_encoder, "MIN_PROBE_COSINE", 1.5)
    emb = SentenceTransformerEmbedder(
        query_encoder="torch", document_encoder="bf16", cache_dir=tmp_path
    )
    status = emb.document_encoder_status
    assert status.active, status.detail
    assert "bfloat16 refused" in status.detail and "batches on onnxruntime" in status.detail
    assert any("bfloat16 document encoder refused" in r.message for r in caplog.records)
    vec, _ = emb.encode_with_tokens(TEXTS)
    want, _ = default.encode_with_tokens(TEXTS)
    assert float(np.abs(vec - want).max()) < 1e-5
