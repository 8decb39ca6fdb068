"""Late interaction against a real Neo4j and the real model: token vectors stored at ingest,
used by recall (explained), filled in by the ``token_vectors`` job (idempotent, one space
only), and the ONNX query path giving PyTorch's token vectors."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import numpy as np
import pytest

from pipelines.consolidate.runner import run_job
from pipelines.models.late_interaction import TOKEN_DIMS, TOKEN_FORMAT, maxsim, unpack
from pipelines.models.token_cache import EMBEDDING, TokenCache
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from tests.cypher import statements
from tests.integration.test_consolidate_jobs import BIOGRAPHY, NOW, ingest


def stored(engine, space) -> dict[str, tuple[str | None, bytes | None]]:
    rows = statements(engine.store).read("consolidate/token_vectors", space=space)
    return {r["id"]: (r["token_format"], r["tokens"]) for r in rows}


@pytest.fixture
def other_space(client) -> Iterator[str]:
    space_id = f"t-{uuid.uuid4().hex[:10]}"
    assert client.post("/v1/spaces", json={"id": space_id}).status_code == 201
    yield space_id
    client.delete(f"/v1/spaces/{space_id}")


def test_ingest_stores_token_vectors_in_the_current_format(engine, space):
    ingest(engine, space, BIOGRAPHY)
    rows = stored(engine, space)
    assert len(rows) == 8
    for fmt, blob in rows.values():
        assert fmt == TOKEN_FORMAT
        assert blob and len(blob) % TOKEN_DIMS == 0
        assert np.allclose(np.linalg.norm(unpack(blob), axis=1), 1.0, atol=1e-5)


def test_recall_explains_the_late_interaction_step(client, engine, space):
    ingest(engine, space, BIOGRAPHY)
    r = client.post(
        f"/v1/spaces/{space}/recall",
        json={"query": "Where did Ann move for her job at Sony?", "explain": True, "touch": False},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert "late_interaction" in body["timings_ms"]
    top = body["results"][0]
    assert "Tokyo" in top["content"]
    late = top["explain"]["late_interaction"]
    assert -2.0 <= late["score"] <= 1.0 and 0.0 <= late["normalised"] <= 1.0
    # the preset without the step: no late-interaction timing, nothing explained
    r = client.post(
        f"/v1/spaces/{space}/recall",
        json={"query": "Where did Ann move?", "explain": True, "preset": "fast"},
    )
    assert "late_interaction" not in r.json()["timings_ms"]
    assert all("late_interaction" not in h["explain"] for h in r.json()["results"])


def _session_step(client, space, query, **extra):
    r = client.post(
        f"/v1/spaces/{space}/recall",
        json={"query": query, "explain": True, "touch": False, **extra},
    )
    assert r.status_code == 200, r.text
    return r.json()


def test_recall_explains_the_session_late_interaction_step(client, engine, space):
    ingest(engine, space, BIOGRAPHY)
    body = _session_step(client, space, "Which museums did Ann talk about in Paris?")
    assert "session_late_interaction" in body["timings_ms"]
    by_session = {}
    for hit in body["results"]:
        step = hit["explain"]["session_late_interaction"]
        assert step["session"] == hit["session_id"]
        by_session[step["session"]] = (step["rank"], step["score"])
    # one rank per session, by score: the Paris session (Louvre, Musée d'Orsay) is first
    assert by_session["s1"][0] == 0
    ranked = sorted(by_session.values())
    assert [score for _, score in ranked] == sorted((s for _, s in ranked), reverse=True)
    # a selection pick that repeats a session is charged the session novelty, scaled by the
    # pool's session resolution (one charge per recall, at most the configured novelty)
    novelty = DEFAULT_RECALL_CONFIG.selection.session_novelty
    assert novelty > 0.0
    seen, charged = set(), set()
    for hit in body["results"]:
        penalty = hit["explain"]["selection"]["session_penalty"]
        if hit["session_id"] in seen:
            charged.add(round(penalty, 9))
        else:
            assert penalty == 0.0
        seen.add(hit["session_id"])
    assert len(charged) == 1 and 0.0 < charged.pop() <= novelty
    # the API passes a request's own novelty through: 0 charges nothing
    off = _session_step(
        client, space, "Which museums did Ann talk about in Paris?", session_novelty=0.0
    )
    assert all(h["explain"]["selection"]["session_penalty"] == 0.0 for h in off["results"])
    # a one-session filter, a time_to filter and the preset without late interaction skip it
    for extra in (
        {"filters": {"sessions": ["s1"]}},
        {"filters": {"time_to": "2030-01-01T00:00:00Z"}},
        {"preset": "fast"},
    ):
        body = _session_step(client, space, "Which museums did Ann talk about?", **extra)
        assert "session_late_interaction" not in body["timings_ms"], extra
        assert all("session_late_interaction" not in h["explain"] for h in body["results"])


def test_session_late_interaction_reads_its_own_space_only(client, engine, space, other_space):
    """Session ids repeat across spaces (s1, s2, s3 in both): the session score must come from
    this space's memories only, so a session in another space full of the query's words
    changes nothing here."""
    ingest(engine, space, BIOGRAPHY)
    query = "Which museums did Ann talk about in Paris?"
    before = _session_step(client, space, query)
    ingest(
        engine,
        other_space,
        [("s2", 0, [("user", "Ann", "Which museums did Ann talk about in Paris?")] * 3)],
    )
    after = _session_step(client, space, query)

    def scores(body):
        # only the session step's own score: full-text statistics are index-wide
        # (docs/architecture.md), so the final scores may move when another space is written to
        return {h["id"]: h["explain"]["session_late_interaction"]["score"] for h in body["results"]}

    assert scores(before) and scores(after) == pytest.approx(scores(before))
    assert {h["id"] for h in after["results"]} == {h["id"] for h in before["results"]}


def test_recall_without_stored_token_vectors_skips_the_step(client, engine, space):
    ingest(engine, space, BIOGRAPHY)
    statements(engine.store).write("consolidate/drop_token_vectors", space=space)
    r = client.post(
        f"/v1/spaces/{space}/recall",
        json={"query": "Where did Ann move for her job?", "explain": True, "touch": False},
    )
    assert r.status_code == 200, r.text
    assert r.json()["results"]
    assert all("late_interaction" not in h["explain"] for h in r.json()["results"])


def test_job_fills_missing_token_vectors_in_its_space_only_and_is_idempotent(
    engine, space, other_space
):
    ingest(engine, space, BIOGRAPHY)
    ingest(engine, other_space, BIOGRAPHY)
    before = stored(engine, space)
    for s in (space, other_space):
        statements(engine.store).write("consolidate/drop_token_vectors", space=s)

    dry = run_job(engine, space, "token_vectors", dry_run=True, now=NOW)
    assert dry.status == "ok" and dry.counts == {"pending": 8}, dry
    assert all(fmt is None for fmt, _ in stored(engine, space).values())

    run = run_job(engine, space, "token_vectors", now=NOW)
    assert run.status == "ok", run
    assert run.counts["filled"] == 8 and run.counts["pending"] == 8
    after = stored(engine, space)
    for mid, (fmt, blob) in after.items():
        assert fmt == TOKEN_FORMAT
        # the same vectors as ingest stored (up to int8 rounding of float noise)
        assert maxsim(unpack(blob), unpack(before[mid][1])) > 0.999
    # the other space was not touched
    assert all(fmt is None and blob is None for fmt, blob in stored(engine, other_space).values())

    again = run_job(engine, space, "token_vectors", now=NOW)
    assert again.counts == {"pending": 0}, again
    assert stored(engine, space) == after


def test_onnx_query_tokens_match_the_pytorch_batch(models):
    emb = models.embedder
    texts = [
        "When did Caroline go to the LGBTQ support group?",
        "Ünïcödé, emoji 🎨 and CJK 東京 in one query",
    ]
    assert emb.query_encoder_status.active, emb.query_encoder_status.detail
    vec_q, tok_q = emb.encode_with_tokens(texts)  # a few texts: onnxruntime
    vec_b, tok_b = emb.encode_with_tokens(texts * 8)  # a batch: the document encoder
    assert np.abs(vec_q - vec_b[:2]).max() < 1e-4
    assert np.abs(vec_b[:2] - emb.encode(texts)).max() < 1e-4
    for a, b in zip(tok_q, tok_b[:2], strict=True):
        assert a.shape == b.shape and a.shape[1] == TOKEN_DIMS
        assert np.abs(a - b).max() < 1e-4


def test_a_request_can_turn_session_novelty_off(engine, space):
    """The context assembler packs a budget and asks for no novelty; a bad value is refused
    by the request model (a 422 naming the field in the API)."""
    from pydantic import ValidationError

    from pipelines.recall.service import Recaller, RecallRequest

    ingest(engine, space, BIOGRAPHY)
    recaller = Recaller(engine)
    query = "What did Ann say about the support group?"
    off = recaller.recall(
        space, RecallRequest(query=query, explain=True, touch=False, session_novelty=0.0)
    )
    assert [h.explain["selection"]["session_penalty"] for h in off.results] == [0.0] * len(
        off.results
    )
    on = recaller.recall(space, RecallRequest(query=query, explain=True, touch=False))
    assert any(h.explain["selection"]["session_penalty"] > 0.0 for h in on.results)
    with pytest.raises(ValidationError) as err:
        RecallRequest(query=query, session_novelty=1.5)
    assert err.value.errors()[0]["loc"] == ("session_novelty",)


def test_the_token_cache_changes_no_result_and_goes_with_the_space(client, engine):
    space_id = f"t-{uuid.uuid4().hex[:10]}"
    assert client.post("/v1/spaces", json={"id": space_id}).status_code == 201
    ingest(engine, space_id, BIOGRAPHY)
    body = {"query": "Where did Ann move for her job?", "explain": True, "touch": False}

    def ranked() -> list[tuple[str, float]]:
        r = client.post(f"/v1/spaces/{space_id}/recall", json=body)
        assert r.status_code == 200, r.text
        return [(h["id"], round(h["score"], 9)) for h in r.json()["results"]]

    cache = engine.token_cache
    engine.token_cache = TokenCache(0)  # nothing kept: every vector read from the graph
    try:
        uncached = ranked()
    finally:
        engine.token_cache = cache
    first, again = ranked(), ranked()  # the second is served from the cache
    assert cache.held(space_id) > 0
    embeddings = [k for k in cache._entries if k[0] == space_id and k[1] == EMBEDDING]
    assert embeddings  # selection's embeddings are kept beside the token vectors
    assert first == again == uncached
    assert client.delete(f"/v1/spaces/{space_id}").status_code == 200
    assert cache.held(space_id) == 0


def test_batches_by_word_pieces_give_the_vectors_of_one_text_at_a_time(models):
    """Texts of very different lengths, cut into many small batches by padded word pieces,
    get the vectors and token vectors each would get alone."""
    emb = models.embedder
    texts = [("word " * n).strip() + f" {n}" for n in (1, 300, 7, 40, 2, 120, 3, 60, 9, 15)]
    alone = [emb.encode_with_tokens([t] * 9) for t in texts]  # 9 > direct_max: the batch path
    saved = emb.batch_pieces, emb.batch_texts
    emb.batch_pieces, emb.batch_texts = 300, 3
    try:
        vectors, tokens = emb.encode_with_tokens(texts)
    finally:
        emb.batch_pieces, emb.batch_texts = saved
    assert vectors.shape == (len(texts), emb.dimensions)
    for i, (vec, tok) in enumerate(alone):
        assert np.abs(vectors[i] - vec[0]).max() < 1e-4
        assert tokens[i].shape == tok[0].shape
        assert np.abs(tokens[i] - tok[0]).max() < 1e-4
    assert np.abs(vectors - emb.encode(texts)).max() < 1e-4
