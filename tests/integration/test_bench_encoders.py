"""``python -m benchmarks.encoders``' encoder comparison on the session's real embedder: both
encoders run on the same texts, agree, and the report prints them side by side."""

from __future__ import annotations

from benchmarks.encoders import ENCODERS, batches_on, compare_encoders, markdown
from pipelines.models.embeddings import SentenceTransformerEmbedder

TEXTS = [
    "user: I moved to Lisbon in March and started cello lessons.",
    "assistant: " + "a long answer about sourdough starters and hydration " * 30,
    "ok",
    "Émilie: Zürich et 東京 — twice!",
] * 5


def test_both_encoders_run_on_the_same_texts_and_agree(models):
    emb = models.embedder
    assert isinstance(emb, SentenceTransformerEmbedder)
    onnx = emb._doc
    assert onnx is not None, emb.document_encoder_status.detail
    out = compare_encoders(emb, onnx, TEXTS, step=10)
    assert emb._doc is onnx  # the comparison hands the encoder back
    assert out["texts"] == len(TEXTS) and out["characters"] == sum(map(len, TEXTS))
    assert out["sentence_cosine_min"] > 0.9999 and out["token_cosine_min"] > 0.999
    for which in ENCODERS:
        row = out["encoders"][which]
        assert row["wall_s"] > 0 and row["texts_per_s"] > 0 and row["chars_per_s"] > 0
    with batches_on(emb, "torch", onnx):
        assert emb._doc is None
    assert emb._doc is onnx
    report = markdown(
        {
            "dataset": "test texts",
            "command": "python -m benchmarks.encoders",
            "code": {"commit": "0123456789abcdef"},
            "encoders": out,
        }
    )
    assert "| torch |" in report and "| onnx |" in report and "Speed-up" in report
