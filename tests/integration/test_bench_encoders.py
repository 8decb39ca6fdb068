"""``python -m benchmarks.encoders``' encoder comparison on the session's real embedder: every
encoder runs on the same texts, agrees with the baseline, and the report prints them side by
side."""

from __future__ import annotations

from benchmarks.encoders import ENCODERS, batch_encoders, batches_on, compare_encoders, markdown
from pipelines.models.embeddings import SentenceTransformerEmbedder

TEXTS = [
    "user: I moved to Lisbon in March and started cello lessons.",
    "assistant: " + "a long answer about sourdough starters and hydration " * 30,
    "ok",
    "Émilie: Zürich et 東京 — twice!",
] * 5


def test_every_encoder_runs_on_the_same_texts_and_agrees(models):
    emb = models.embedder
    assert isinstance(emb, SentenceTransformerEmbedder)
    onnx = emb._doc
    assert onnx is not None, emb.document_encoder_status.detail
    encoders = batch_encoders(emb, ENCODERS)
    assert encoders["torch"] is None and encoders["onnx"] is onnx
    out = compare_encoders(emb, encoders, TEXTS, step=10)
    assert emb._doc is onnx  # the comparison hands the encoder back
    assert out["texts"] == len(TEXTS) and out["characters"] == sum(map(len, TEXTS))
    assert out["baseline"] == "torch" and set(out["agreement"]) == {"onnx", "bf16"}
    onnx_agrees = out["agreement"]["onnx"]
    assert onnx_agrees["sentence_cosine_min"] > 0.9999 and onnx_agrees["token_cosine_min"] > 0.999
    assert out["agreement"]["bf16"]["sentence_cosine_min"] > 0.999
    for which in ENCODERS:
        row = out["encoders"][which]
        assert row["wall_s"] > 0 and row["texts_per_s"] > 0 and row["chars_per_s"] > 0
    assert out["encoders"]["torch"]["speedup_cpu"] == 1.0
    with batches_on(emb, None):
        assert emb._doc is None
    assert emb._doc is onnx
    report = markdown(
        {
            "encoders": list(ENCODERS),
            "command": "python -m benchmarks.encoders",
            "code": {"commit": "0123456789abcdef"},
            "runs": [{"dataset": "test texts", "encoders": out}],
        }
    )
    assert "| torch |" in report and "| onnx |" in report and "| bf16 |" in report
    assert "(baseline)" in report
