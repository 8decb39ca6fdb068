"""Memories of any length: a 580 KB memory (over a thousand chunks) stored verbatim, indexed as
chunks in its own space, found by a sentence from its middle, and erased with its chunks (real
Neo4j, real models); a 2 MB memory is planned within the request's embedding work limit."""

from __future__ import annotations

import math
import re
import uuid
from typing import Any

import pytest

from pipelines import spaces
from pipelines.ingest.chunking import blocks
from pipelines.ingest.text import embedding_input
from pipelines.overrides import merge_overrides
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.request import RecallRequest
from pipelines.recall.service import open_recaller
from pipelines.spaces import fulltext_tag
from tests.cypher import statements

NEEDLE = (
    "Bartholomew the lighthouse keeper counted four hundred and seventeen zebra-striped "
    "seagulls on the northern breakwater every foggy Tuesday."
)


TOPICS = [
    ("warehouse", "pallets of flour, rice and canned tomatoes arrive on weekdays"),
    ("orchestra", "the violins rehearse the second movement before the cellos join"),
    ("compiler", "the parser builds a syntax tree that the optimiser then rewrites"),
    ("garden", "tomato seedlings need sun, compost and water every other morning"),
    ("railway", "the night train to Vienna waits for the connection from Munich"),
    ("bakery", "sourdough rises overnight and is baked at dawn in the stone oven"),
    ("hospital", "the ward rounds start at eight and the nurses update the charts"),
    ("football", "the midfielders press high while the defenders hold a deep line"),
]


def long_document(target_chars: int) -> str:
    """Varied prose, headings, lists and fenced code, about ``target_chars`` long, NEEDLE in
    the middle (varied, as real documents are: thousands of near-identical chunks would be a
    pathological case for any approximate vector index)."""
    parts: list[str] = []
    size = 0
    i = 0
    while size < target_chars:
        name, sentence = TOPICS[i % len(TOPICS)]
        block = (
            f"## {name.title()} notes {i}\n\n"
            f"In part {i} about the {name}, {sentence}. Entry {i * 7919 % 10007} records it.\n\n"
            f"- {name} item {i}a\n- {name} item {i}b\n  kept for review\n\n"
            f"```python\ndef check_{name}_{i}(x):\n    return x + {i}\n```\n\n"
        )
        parts.append(block)
        size += len(block)
        i += 1
    middle = len(parts) // 2
    parts.insert(middle, NEEDLE + "\n\n")
    return "".join(parts)


# 1,087 chunks: more than a thousand, more than one slice of the encoder's batches and one
# statement of chunk rows (256 each). Which blocks share the sentence's chunk depends on the size:
# here its cosine with the sentence is 0.64 (0.38 at 600,000 characters), well clear of the
# memory's mean vector once the length penalty is taken. Every chunk costs a model pass: the
# 2 MB document (3,716 chunks) took 250 to 500 s of the suite.
LONG_CHARS = 580_000


@pytest.fixture(scope="module")
def long_memory(client):
    """One space holding a 580 KB memory (ingested once for the module), and a second space."""
    own, other = f"long-{uuid.uuid4().hex[:8]}", f"long-other-{uuid.uuid4().hex[:8]}"
    for sid in (own, other):
        assert client.post("/v1/spaces", json={"id": sid}).status_code == 201
    text = long_document(LONG_CHARS)
    r = client.post(
        f"/v1/spaces/{own}/memories",
        json={"memories": [{"id": "doc", "content": text, "speaker": "user", "role": "user"}]},
    )
    assert r.status_code == 201, r.text[:500]
    r2 = client.post(
        f"/v1/spaces/{other}/memories",
        json={"memories": [{"id": "note", "content": "Seagulls on a breakwater."}]},
    )
    assert r2.status_code == 201
    yield own, other, text, r.json()
    for sid in (own, other):
        client.delete(f"/v1/spaces/{sid}")


def test_stored_verbatim_once_and_chunked_within_the_window(client, engine, long_memory):
    space, _, text, body = long_memory
    detail = client.get(f"/v1/spaces/{space}/memories/doc").json()
    assert detail["memory"]["text"] == text
    assert len(text) >= LONG_CHARS
    assert body["items"][0]["decision"] == "stored"
    assert body["counts"]["chunks"] > 1
    chunks = statements(engine.store).read("ingest/chunks", space=space, memory="doc")
    assert len(chunks) == body["counts"]["chunks"] == chunks[0]["of"]
    embedder = engine.embedder
    window = embedder.max_tokens - 2
    previous_end = 0
    for c in chunks:
        assert c["text"] == text[c["start"] : c["end"]]  # a span of the verbatim text
        assert previous_end <= c["start"] < c["end"]
        assert not text[previous_end : c["start"]].strip()  # only whitespace between chunks
        assert c["embedded"] and c["token_format"] and c["token_bytes"] > 0
        assert c["space_tag"] == fulltext_tag(space)
        previous_end = c["end"]
    assert not text[previous_end:].strip()
    inputs = [embedding_input(c["text"], "user") for c in chunks]
    assert max(embedder.count_pieces(inputs)) <= window  # never beyond the model's window
    # structure first: every block of the document fits the window, so every chunk starts
    # and ends where a block does (no block is split)
    starts = {b.start for b in blocks(text)}
    ends = {b.end for b in blocks(text)}
    assert all(c["start"] in starts and c["end"] in ends for c in chunks)


def test_found_by_a_sentence_from_its_middle(engine, long_memory):
    space, other, _, _ = long_memory
    # the sentence itself: its chunk also holds the neighbouring blocks (about 250 word
    # pieces in all), among over a thousand chunks in the same style
    embedding = engine.embedder.encode([NEEDLE])[0].tolist()
    lucene = f'(zebra striped seagulls lighthouse) AND space_tag:"{fulltext_tag(space)}"'
    found = statements(engine.store).read(
        "ingest/chunk_search",
        space=space,
        lucene=lucene,
        embedding=embedding,
        fetch=1000,  # approximate search among ~1,100 chunks of one template: a wide beam
        k=10,
    )[0]
    chunks = {
        c["id"]: c["text"]
        for c in statements(engine.store).read("ingest/chunks", space=space, memory="doc")
    }
    assert found["fulltext"] and NEEDLE in chunks[found["fulltext"][0]]
    assert any(NEEDLE in chunks[cid] for cid in found["vector"])
    # the other space's tag finds none of this memory's chunks
    lucene_other = f'(zebra striped seagulls lighthouse) AND space_tag:"{fulltext_tag(other)}"'
    elsewhere = statements(engine.store).read(
        "ingest/chunk_search",
        space=other,
        lucene=lucene_other,
        embedding=embedding,
        fetch=200,
        k=3,
    )[0]
    assert elsewhere == {"fulltext": [], "vector": []}


def test_a_2_mb_memory_is_within_the_embedding_work_limit(client):
    """The server's default limit admits a 2 MB document of short blocks: its chunk plan (the
    embedder's tokenizer, no model run), which the server checks before any model runs."""
    ingestor = client.app.state.services.ingestor
    text = long_document(2_000_000)
    chunks = ingestor.encoder.plan([(text, "user")])[0]
    assert len(text) >= 2_000_000
    assert 1000 < len(chunks) <= ingestor.config.max_embedding_inputs


def test_short_memories_have_no_chunks(engine, long_memory):
    _, other, _, _ = long_memory
    assert statements(engine.store).read("ingest/chunks", space=other, memory="note") == []
    assert spaces.counts(engine.store, other)["chunks"] == 0


def test_erasure_removes_the_chunks(client, engine):
    space = f"long-erase-{uuid.uuid4().hex[:8]}"
    assert client.post("/v1/spaces", json={"id": space}).status_code == 201
    text = long_document(8_000)
    memories = [{"id": "a", "content": text}, {"id": "b", "content": text + " again"}]
    r = client.post(f"/v1/spaces/{space}/memories", json={"memories": memories})
    assert r.status_code == 201, r.text[:300]
    assert spaces.counts(engine.store, space)["chunks"] > 2
    deleted = client.delete(f"/v1/spaces/{space}/memories/a").json()["deleted"]
    assert deleted["chunks"] > 1
    assert statements(engine.store).read("ingest/chunks", space=space, memory="a") == []
    assert statements(engine.store).read("ingest/chunks", space=space, memory="b")
    gone = client.delete(f"/v1/spaces/{space}").json()["deleted"]
    assert gone["chunks"] > 1
    assert spaces.counts(engine.store, space)["chunks"] == 0


def _chunk_of(text: str, entry: dict[str, Any]) -> str:
    return text[entry["start"] : entry["end"]]


def test_recall_finds_it_by_its_best_chunk(client, long_memory):
    space, other, text, _ = long_memory
    r = client.post(
        f"/v1/spaces/{space}/recall",
        json={"query": NEEDLE, "k": 5, "explain": True, "touch": False},
    )
    assert r.status_code == 200, r.text[:500]
    body = r.json()
    hit = next(h for h in body["results"] if h["id"] == "doc")
    chunks = hit["explain"]["chunks"]
    assert chunks["of"] > 1000
    best = chunks["matched"][0]
    assert NEEDLE in _chunk_of(text, best)
    assert best["id"] == f"doc#c{best['index']}"
    assert {"vector", "fulltext"} <= set(best["scores"])
    # its dense signal is the best chunk's cosine less the length penalty (on Neo4j's
    # (1 + cos) / 2 scale, so twice that in cosine), still above the memory's mean vector
    assert "vector" in chunks["signals"]
    penalty = DEFAULT_RECALL_CONFIG.candidates.chunk_length_penalty
    assert hit["explain"]["signals"]["vector"]["score"] == pytest.approx(
        best["scores"]["vector"] - 2.0 * penalty * math.log(chunks["of"]), abs=1e-5
    )
    # the other space holds no chunk: its recall never sees this memory
    elsewhere = client.post(
        f"/v1/spaces/{other}/recall", json={"query": NEEDLE, "explain": True, "touch": False}
    ).json()
    assert [h["id"] for h in elsewhere["results"]] == ["note"]
    assert "chunks" not in elsewhere["results"][0]["explain"]
    assert "chunks" in body["timings_ms"] and "chunks" not in elsewhere["timings_ms"]  # skipped
    # the request's filters apply to a chunk's memory
    filtered = client.post(
        f"/v1/spaces/{space}/recall",
        json={"query": NEEDLE, "filters": {"roles": ["assistant"]}, "touch": False},
    ).json()
    assert filtered["results"] == []


def test_the_approximate_chunk_index_finds_it_too(engine, long_memory):
    """Above the exact-scan threshold the chunks come from the over-fetched global index."""
    space, _, text, _ = long_memory
    config = merge_overrides(
        DEFAULT_RECALL_CONFIG, {"candidates": {"exact_scan_threshold": 0}}, "recall"
    )
    recaller, close = open_recaller(engine, config)
    try:
        out = recaller.recall(space, RecallRequest(query=NEEDLE, k=3, explain=True, touch=False))
    finally:
        close()
    hit = next(h for h in out.results if h.id == "doc")
    assert hit.explain is not None and hit.chunk_count > 1000
    assert NEEDLE in text[hit.chunks[0].start : hit.chunks[0].end]


def test_context_shows_the_best_chunk_not_the_file(client, long_memory):
    space, _, text, _ = long_memory
    r = client.post(
        f"/v1/spaces/{space}/context",
        json={"query": NEEDLE, "context_window": 4000, "explain": True},
    )
    assert r.status_code == 200, r.text[:500]
    out = r.json()
    assert len(out["prompt"]) < 20_000  # never the whole file
    assert NEEDLE in out["prompt"]
    assert "doc" in [i for ids in out["included_ids"].values() for i in ids]
    marker = re.search(
        r"\[… chunk ([\d,]+) of ([\d,]+) of memory doc; ([\d,]+) characters left out …\]",
        out["prompt"],
    )
    assert marker is not None, out["prompt"][:2000]
    index, of, left_out = (int(g.replace(",", "")) for g in marker.groups())
    assert of > 1000 and 0 < left_out < len(text)
    assert of // 4 < index < 3 * of // 4  # the chunk from the middle, not the first
    # the marker counts in the token budget: the report's tokens are within the window
    assert out["report"]["total_tokens"] <= 4000
