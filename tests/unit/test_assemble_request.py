"""The /context request validated once (pydantic, each refusal naming its field) and the
query-embedding memo."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from pipelines.assemble.request import ContextRequest, TemplateSlot
from pipelines.errors import InvalidInput
from pipelines.models.memo import MemoEmbedder


class CountingEmbedder:
    name = "counting"
    dimensions = 4

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts):
        texts = list(texts)
        self.calls.append(texts)
        if not texts:
            return np.zeros((0, 4), dtype=np.float32)
        return np.stack([np.full(4, float(len(t)), dtype=np.float32) for t in texts])


def test_memo_embedder_embeds_each_text_once_and_keeps_order() -> None:
    inner = CountingEmbedder()
    memo = MemoEmbedder(inner, size=2)
    a = memo.encode(["aa", "b"])
    b = memo.encode(["b", "aa", "ccc"])
    assert inner.calls == [["aa", "b"], ["ccc"]]
    assert a[:, 0].tolist() == [2.0, 1.0] and b[:, 0].tolist() == [1.0, 2.0, 3.0]
    memo.encode(["aa"])  # still memoised (used more recently than "b")
    assert len(inner.calls) == 2
    memo.encode(["b"])  # evicted: the least recently used of three with room for two
    assert inner.calls[-1] == ["b"]
    assert memo.encode([]).shape == (0, 4) and memo.dimensions == 4 and memo.name == "counting"
    _, tokens = memo.encode_with_tokens(["aa"])
    assert tokens == [None]  # the inner embedder has no token vectors


def _slot(key: str, priority: Any = 1, condenser: str | None = None) -> dict[str, Any]:
    return {"key": key, "content": "x", "priority": priority, "condenser": condenser}


def _field(changes: dict[str, Any]) -> str:
    body = {"query": "what next?", "context_window": 4096, **changes}
    try:
        ContextRequest.model_validate(body)
    except InvalidInput as exc:
        assert exc.field is not None
        return exc.field
    except ValidationError as exc:
        return ".".join(str(p) for p in exc.errors()[0]["loc"])
    raise AssertionError(f"accepted: {changes}")


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "x" * 5000}, "query"),
        ({"context_window": 10}, "context_window"),
        ({"context_window": 3_000_000}, "context_window"),
        ({"context_window": 1000.5}, "context_window"),
        ({"context_window": True}, "context_window"),
        ({"headroom": 0.0}, "headroom"),
        ({"headroom": 1.5}, "headroom"),
        ({"headroom": float("nan")}, "headroom"),
        ({"split": (0, 0, 0)}, "split"),
        ({"split": (0.6, 0.4)}, "split"),
        ({"split": (1.2, -0.1, -0.1)}, "split"),
        ({"split": (0.6, 0.3, float("nan"))}, "split"),
        ({"template": [_slot("ok"), _slot("OK", 2)]}, "template.1.key"),
        ({"template": [_slot("current_stage")]}, "template.0.key"),
        ({"template": [_slot("Query")]}, "template.0.key"),
        ({"template": [_slot("a-b")]}, "template.0.key"),
        ({"template": [_slot("é")]}, "template.0.key"),
        ({"template": [_slot("A", 1, "nope")]}, "template.0.condenser"),
        ({"template": [_slot("A", True)]}, "template.0.priority"),
        ({"flat": True}, "flat"),
        ({"ablate": ["ppr"]}, "ablate"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_bad_requests_name_the_field(changes: dict[str, Any], field: str) -> None:
    assert _field(changes) == field


def test_a_good_request_keeps_the_callers_slots_in_order() -> None:
    request = ContextRequest.model_validate(
        {
            "query": "what next?",
            "context_window": 4096,
            "split": [0.5, 0.5, 0.0],
            "template": [_slot("SYSTEM", 0), _slot("recent_2", 4, "truncate")],
        }
    )
    assert request.split == (0.5, 0.5, 0.0)
    assert [s.key for s in request.slots] == ["SYSTEM", "recent_2"]
    assert request.slots[1] == TemplateSlot(
        key="recent_2", content="x", priority=4, condenser="truncate"
    )
    assert ContextRequest(query="q", context_window=256).slots == []
    with pytest.raises(ValidationError):
        request.query = "changed"  # type: ignore[misc]  # frozen
