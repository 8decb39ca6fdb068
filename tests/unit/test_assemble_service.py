"""Unit tests of the assembly service's request validation and query-embedding memo (no
database: the engine is a stand-in; the integration tests cover the rest)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from pipelines.assemble.service import (
    Assembler,
    ContextRequest,
    TemplateSlot,
    _MemoEmbedder,
)
from pipelines.errors import InvalidInput


class CountingEmbedder:
    dimensions = 4

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts):
        texts = list(texts)
        self.calls.append(texts)
        if not texts:
            return np.zeros((0, 4), dtype=np.float32)
        return np.stack([np.full(4, float(len(t)), dtype=np.float32) for t in texts])


def _assembler() -> Assembler:
    engine = SimpleNamespace(embedder=CountingEmbedder(), store=None, models=None)
    return Assembler(engine)


def test_memo_embedder_embeds_each_text_once_and_keeps_order() -> None:
    inner = CountingEmbedder()
    memo = _MemoEmbedder(inner, size=2)
    a = memo.encode(["aa", "b"])
    b = memo.encode(["b", "aa", "ccc"])
    assert inner.calls == [["aa", "b"], ["ccc"]]
    assert a[:, 0].tolist() == [2.0, 1.0] and b[:, 0].tolist() == [1.0, 2.0, 3.0]
    memo.encode(["aa"])  # still memoised (used more recently than "b")
    assert len(inner.calls) == 2
    memo.encode(["b"])  # evicted: the least recently used of three with room for two
    assert inner.calls[-1] == ["b"]
    assert memo.encode([]).shape == (0, 4) and memo.dimensions == 4


def test_recall_embeds_through_the_memo() -> None:
    assembler = _assembler()
    assert assembler.recaller.embedder is assembler.embedder
    assert isinstance(assembler.embedder, _MemoEmbedder)


def _field(request: ContextRequest) -> str | None:
    with pytest.raises(InvalidInput) as err:
        _assembler()._validate(request)
    return err.value.field


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "x" * 5000}, "query"),
        ({"context_window": 10}, "context_window"),
        ({"context_window": 3_000_000}, "context_window"),
        ({"context_window": 1000.5}, "context_window"),
        ({"headroom": 0.0}, "headroom"),
        ({"headroom": float("nan")}, "headroom"),
        ({"split": (0.6, 0.3, 0.2)}, "split"),
        ({"split": (0.6, 0.4)}, "split"),
        ({"split": (1.2, -0.1, -0.1)}, "split"),
        ({"ablate": frozenset({"ppr", "bogus"})}, "ablate"),
        ({"template": [TemplateSlot("ok", "x", 1), TemplateSlot("OK", "y", 2)]}, "template.1.key"),
        ({"template": [TemplateSlot("current_stage", "x", 1)]}, "template.0.key"),
        ({"template": [TemplateSlot("a-b", "x", 1)]}, "template.0.key"),
        ({"template": [TemplateSlot("é", "x", 1)]}, "template.0.key"),
        ({"template": [TemplateSlot("A", "x", 1, "nope")]}, "template.0.condenser"),
        ({"template": [TemplateSlot("A", "x", True)]}, "template.0.priority"),
    ],
)
def test_bad_requests_name_the_field(changes: dict, field: str) -> None:
    base = {"query": "what next?", "context_window": 4096}
    assert _field(ContextRequest(**{**base, **changes})) == field


def test_good_request_passes_and_returns_the_caller_slots() -> None:
    slots = [TemplateSlot("SYSTEM", "be brief", 0), TemplateSlot("recent_2", "hi", 4, "truncate")]
    request = ContextRequest(
        "what next?", 4096, split=(0.5, 0.5, 0.0), template=slots, ablate=frozenset({"ppr"})
    )
    assert _assembler()._validate(request) == slots
