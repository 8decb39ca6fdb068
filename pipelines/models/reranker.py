"""Optional FlashRank cross-encoder, wired so it can never download anything silently.

FlashRank keeps each model in ``<cache_dir>/<model_name>/`` (an ONNX file plus tokenizer files)
and downloads a missing model from a hub when a ``Ranker`` is constructed. We check the model
directory ourselves first: without ``allow_download`` a missing model means "not available",
with a clear reason, and recall falls back to the configured no-new-weights reranker.

A preflight reranks a known pair and refuses a model whose scores are flat or wrongly ordered
(a known FlashRank failure mode returns 0.0 for everything without raising).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipelines.models import ModelStatus

PREFLIGHT_QUERY = "What did the cat do?"
PREFLIGHT_PASSAGES = ("The cat sat on the mat all afternoon.", "Dogs are loyal pets.")


@dataclass(frozen=True)
class RerankerSettings:
    enabled: bool = False
    model_dir: str | None = None  # FlashRank cache dir holding <model_name>/
    model_name: str = "ms-marco-MiniLM-L-12-v2"
    allow_download: bool = False
    max_length: int = 256


class FlashRankReranker:
    def __init__(self, ranker: Any) -> None:
        self._ranker = ranker

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        from flashrank import RerankRequest

        req = RerankRequest(
            query=query, passages=[{"id": i, "text": t} for i, t in enumerate(passages)]
        )
        out = {int(r["id"]): float(r["score"]) for r in self._ranker.rerank(req)}
        return [out[i] for i in range(len(passages))]


def preflight(scores: Sequence[float]) -> str | None:
    """Return why the preflight scores are unusable, or None if they look like a real model."""
    if len(scores) != 2:
        return f"expected 2 scores, got {len(scores)}"
    if max(scores) - min(scores) < 1e-4:
        return f"flat scores {list(scores)}: model did not load"
    if scores[0] <= scores[1]:
        return f"relevant passage scored below irrelevant one {list(scores)}"
    return None


def load_reranker(settings: RerankerSettings) -> tuple[FlashRankReranker | None, ModelStatus]:
    name = f"reranker:flashrank:{settings.model_name}"
    if not settings.enabled:
        return None, ModelStatus(
            name, False, "disabled (MNEMOGRAPH_RERANKER_ENABLED=false)", required=False
        )
    if not settings.model_dir:
        return None, ModelStatus(
            name,
            False,
            "no model directory configured (MNEMOGRAPH_RERANKER_MODEL_DIR)",
            required=False,
        )
    model_path = Path(settings.model_dir) / settings.model_name
    has_model = model_path.is_dir() and any(model_path.glob("*.onnx"))
    if not has_model and not settings.allow_download:
        return None, ModelStatus(
            name,
            False,
            f"model files not found in {model_path} and downloads are disabled "
            "(MNEMOGRAPH_RERANKER_ALLOW_DOWNLOAD=false)",
            required=False,
        )
    t0 = time.monotonic()
    try:
        from flashrank import Ranker

        rr = FlashRankReranker(
            Ranker(
                model_name=settings.model_name,
                cache_dir=str(settings.model_dir),
                max_length=settings.max_length,
            )
        )
        problem = preflight(rr.score(PREFLIGHT_QUERY, PREFLIGHT_PASSAGES))
    except Exception as exc:
        return None, ModelStatus(
            name, False, f"failed to load: {exc}", time.monotonic() - t0, required=False
        )
    if problem:
        return None, ModelStatus(
            name,
            False,
            f"preflight refused the model: {problem}",
            time.monotonic() - t0,
            required=False,
        )
    return rr, ModelStatus(
        name,
        True,
        f"loaded from {model_path}; preflight passed",
        time.monotonic() - t0,
        required=False,
    )
