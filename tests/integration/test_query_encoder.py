"""The ONNX query encoder: the same vectors as PyTorch, cached, and a loud fallback.

Uses the session's real models (the packaged all-MiniLM-L6-v2); no Neo4j needed.
"""

from __future__ import annotations

import numpy as np
import pytest

from pipelines.models.embeddings import SentenceTransformerEmbedder
from pipelines.models.query_encoder import (
    MAX_PROBE_DIFF,
    PROBE_TEXTS,
    load_query_encoder,
    weights_digest,
)

TEXTS = [
    "When did Caroline go to the LGBTQ support group?",
    "ok",
    "What did Melanie paint after the camping trip in June 2023, and why?",
    "Ünïcödé, emoji 🎨 and CJK 東京 in one query",
    "word " * 400,  # longer than the model's 256-token window: truncated the same way
    "SELECT * FROM memories WHERE id = 'x' -- code-like text",
]


@pytest.fixture(scope="module")
def embedder(models) -> SentenceTransformerEmbedder:
    emb = models.embedder
    assert isinstance(emb, SentenceTransformerEmbedder)
    return emb


def _load(emb: SentenceTransformerEmbedder, cache, reference=None):
    return load_query_encoder(
        emb._model,
        emb._query_ids,
        reference or emb._torch_forward,
        emb.path,
        emb.name,
        cache,
    )


def test_queries_run_on_onnxruntime_by_default(embedder):
    status = embedder.query_encoder_status
    assert status.active, status.detail
    assert "onnxruntime" in status.detail


def test_onnx_vectors_equal_pytorch_vectors(embedder):
    onnx = embedder.encode(TEXTS[:8])  # query-sized: the ONNX path
    torch = embedder._torch_forward(TEXTS)
    assert onnx.shape == torch.shape == (len(TEXTS), embedder.dimensions)
    assert onnx.dtype == np.float32
    assert float(np.abs(onnx - torch).max()) < 1e-5
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)
    # and a batch (ingest, PyTorch with padding) embeds the same texts to the same vectors
    batch = embedder.encode(TEXTS * 2)[: len(TEXTS)]
    assert float(np.abs(onnx - batch).max()) < 1e-5


def test_the_query_tokenizer_gives_the_model_pipelines_ids(embedder):
    for text in TEXTS:
        want = embedder._preprocess([text])["input_ids"].numpy()
        got = embedder._query_ids(text)
        assert got.dtype == np.int64 and np.array_equal(got, want), text[:40]
    assert embedder._query_ids(TEXTS[4]).shape[1] == embedder._model.max_seq_length


def test_queries_do_not_wait_for_or_break_a_batch_in_progress(embedder):
    """Queries embed from other threads while an ingest batch runs: no tokenizer error
    ("Already borrowed"), and every vector is the one embedded alone."""
    from concurrent.futures import ThreadPoolExecutor

    batch = [f"ingest turn number {i} about hiking and cello lessons" for i in range(256)]
    alone = {t: embedder.encode([t])[0] for t in TEXTS}
    with ThreadPoolExecutor(max_workers=4) as pool:
        big = pool.submit(embedder.encode, batch)
        queries = [pool.submit(embedder.encode, [t]) for t in TEXTS * 5]
        results = [q.result() for q in queries]
        assert big.result().shape == (len(batch), embedder.dimensions)
    for text, vec in zip(TEXTS * 5, results, strict=True):
        assert float(np.abs(vec[0] - alone[text]).max()) < 1e-6


def test_the_export_is_cached_per_weights(embedder, tmp_path):
    enc, status = _load(embedder, tmp_path)
    assert enc is not None and status.active and "exported to" in status.detail
    files = list(tmp_path.glob("*.onnx"))
    assert [f.name for f in files] == [f"{embedder.name}-{weights_digest(embedder.path)}.onnx"]
    mtime = files[0].stat().st_mtime_ns
    enc2, status2 = _load(embedder, tmp_path)
    assert enc2 is not None and "cached at" in status2.detail
    assert files[0].stat().st_mtime_ns == mtime  # reused, not exported again
    ids = embedder._query_ids(TEXTS[0])
    assert np.array_equal(enc.encode_ids(ids), enc2.encode_ids(ids))
    assert not list(tmp_path.glob("*.tmp"))  # no half-written export left behind


def test_a_corrupt_cached_export_falls_back_to_pytorch(embedder, tmp_path):
    path = tmp_path / f"{embedder.name}-{weights_digest(embedder.path)}.onnx"
    path.write_bytes(b"not an onnx model")
    enc, status = _load(embedder, tmp_path)
    assert enc is None and not status.active
    assert "queries on PyTorch" in status.detail and "ONNX unavailable" in status.detail


def test_an_unwritable_cache_falls_back_to_pytorch(embedder, tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory should be")
    enc, status = _load(embedder, blocker)
    assert enc is None and "queries on PyTorch" in status.detail


def test_an_export_that_disagrees_with_pytorch_is_refused(embedder, tmp_path):
    def wrong_reference(texts):
        return -embedder._torch_forward(texts)

    enc, status = _load(embedder, tmp_path, reference=wrong_reference)
    assert enc is None and not status.active
    assert "differs from PyTorch" in status.detail
    assert f"{MAX_PROBE_DIFF:.0e}" in status.detail


def test_torch_can_be_chosen_and_gives_the_same_vectors(embedder):
    torch_only = SentenceTransformerEmbedder(query_encoder="torch")
    assert not torch_only.query_encoder_status.active
    assert "configured" in torch_only.query_encoder_status.detail
    got = torch_only.encode(list(PROBE_TEXTS))
    assert float(np.abs(got - embedder.encode(list(PROBE_TEXTS))).max()) < 1e-5


def test_an_unknown_query_encoder_is_refused():
    with pytest.raises(ValueError, match="query_encoder"):
        SentenceTransformerEmbedder(query_encoder="tensorrt")
