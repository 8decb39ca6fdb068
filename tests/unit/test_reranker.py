"""FlashRank wiring: never downloads silently, refuses flat or inverted preflight scores."""

from pipelines.models.reranker import RerankerSettings, load_reranker, preflight


def test_preflight_rules():
    assert preflight([0.0, 0.0]) is not None  # the known silent-failure mode
    assert "below" in preflight([0.1, 0.9])
    assert preflight([0.9]) is not None
    assert preflight([0.95, 0.01]) is None


def test_disabled_by_default():
    rr, status = load_reranker(RerankerSettings())
    assert rr is None and not status.ready and not status.required
    assert "disabled" in status.detail


def test_missing_model_dir_never_downloads(tmp_path):
    settings = RerankerSettings(enabled=True, model_dir=str(tmp_path))
    rr, status = load_reranker(settings)
    assert rr is None and not status.ready
    assert "downloads are disabled" in status.detail
    assert list(tmp_path.iterdir()) == []  # nothing was fetched or created


def test_unconfigured_dir():
    rr, status = load_reranker(RerankerSettings(enabled=True))
    assert rr is None and "no model directory" in status.detail


def test_broken_model_files_reported(tmp_path):
    model = tmp_path / "ms-marco-MiniLM-L-12-v2"
    model.mkdir()
    (model / "flashrank-MiniLM-L-12-v2_Q.onnx").write_bytes(b"not a model")
    rr, status = load_reranker(RerankerSettings(enabled=True, model_dir=str(tmp_path)))
    assert rr is None and not status.ready and "failed to load" in status.detail
