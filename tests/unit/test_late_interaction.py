"""Late interaction: token selection, the fixed projection, int8 packing, MaxSim, and the
head blend recall uses. Pure: no model, no Neo4j."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from pipelines.models.late_interaction import (
    TOKEN_DIMS,
    TOKEN_FORMAT,
    batch_token_vectors,
    keep_positions,
    late_score,
    maxsim,
    pack,
    projection,
    token_roles,
    token_vectors,
    unpack,
    unpack_concatenated,
)
from pipelines.recall.steps.late_interaction import head_blend


def test_keep_positions_drops_markers_stop_words_and_punctuation():
    tokens = ["[CLS]", "when", "did", "caroline", "go", "to", "the", "lgbt", "##q", "?", "[SEP]"]
    kept = [tokens[i] for i in keep_positions(tokens)]
    assert kept == ["caroline", "go", "lgbt", "##q"]


def test_keep_positions_never_leaves_a_text_without_tokens():
    assert keep_positions(["[CLS]", "what", "is", "it", "?", "[SEP]"]) == [1, 2, 3, 4]
    assert keep_positions(["[CLS]", "[SEP]"]) == [0, 1]


def test_projection_is_fixed_signed_and_scaled():
    p = projection(384)
    assert p.shape == (384, TOKEN_DIMS) and p.dtype == np.float32
    assert set(np.unique(np.round(p * np.sqrt(TOKEN_DIMS), 6))) == {-1.0, 1.0}
    # stored vectors depend on it: its signs are pinned (a change needs a new TOKEN_FORMAT)
    assert hashlib.sha256((p > 0).tobytes()).hexdigest()[:16] == "44c7693077390784"
    assert 0.4 < float((p > 0).mean()) < 0.6
    assert not p.flags.writeable
    with pytest.raises(ValueError):
        projection(0)


def test_projection_roughly_preserves_cosines():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((200, 384)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = x @ projection(384)
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    a = x[:100] @ x[100:].T
    b = y[:100] @ y[100:].T
    assert float(np.abs(a - b).mean()) < 0.1


def test_token_vectors_are_unit_rows_of_the_kept_tokens():
    rng = np.random.default_rng(2)
    tokens = ["[CLS]", "the", "sagrada", "familia", "[SEP]"]
    out = token_vectors(rng.standard_normal((5, 384)), tokens)
    assert out.shape == (2, TOKEN_DIMS)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="expected"):
        token_vectors(rng.standard_normal((4, 384)), tokens)


def test_batch_token_vectors_equal_token_vectors_text_by_text():
    vocab = ["[PAD]", "[CLS]", "[SEP]", "the", "sagrada", "familia", "?", "what", "##q"]
    rows = [
        [1, 4, 5, 3, 8, 2],  # kept: sagrada familia ##q
        [1, 7, 6, 2, 0, 0],  # only stop words: every non-marker token kept
        [1, 2, 0, 0, 0, 0],  # only markers: both kept
    ]
    lengths = [6, 4, 2]
    ids = np.array(rows)
    hidden = np.random.default_rng(4).standard_normal((3, 6, 384)).astype(np.float32)
    out = batch_token_vectors(hidden, ids, lengths, token_roles(vocab))
    for r, n in enumerate(lengths):
        ref = token_vectors(hidden[r, :n], [vocab[i] for i in rows[r][:n]])
        assert out[r].shape == ref.shape
        assert np.allclose(out[r], ref, atol=1e-5)
    assert [len(o) for o in out] == [3, 2, 2]


def test_pack_and_unpack_round_trip_within_int8_error():
    rng = np.random.default_rng(3)
    v = rng.standard_normal((7, TOKEN_DIMS)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    blob = pack(v)
    assert isinstance(blob, bytes) and len(blob) == 7 * TOKEN_DIMS
    back = unpack(bytearray(blob))
    assert back.shape == v.shape
    assert float(np.abs(back - v).max()) < 0.02
    assert abs(maxsim(v, back) - 1.0) < 1e-3


def test_pack_and_unpack_refuse_malformed_input():
    with pytest.raises(ValueError):
        pack(np.zeros((2, TOKEN_DIMS + 1), dtype=np.float32))
    with pytest.raises(ValueError, match="whole number"):
        unpack(b"\x01" * (TOKEN_DIMS + 3))
    with pytest.raises(ValueError):
        unpack(b"")


def test_unpack_concatenated_is_the_stacked_unpack_of_each_blob():
    rng = np.random.default_rng(5)
    blobs = [pack(rng.standard_normal((n, TOKEN_DIMS)).astype(np.float32)) for n in (3, 1, 4)]
    together = unpack_concatenated([blobs[0], bytearray(blobs[1]), blobs[2]])
    assert together.shape == (8, TOKEN_DIMS)
    assert np.array_equal(together, np.concatenate([unpack(b) for b in blobs]))
    # a session's score is MaxSim over all of its memories' tokens: at least each memory's
    query = unpack(blobs[1])[:1]
    assert maxsim(query, together) == pytest.approx(max(maxsim(query, unpack(b)) for b in blobs))


def test_maxsim_is_the_mean_of_each_query_tokens_best_match():
    e = np.eye(TOKEN_DIMS, dtype=np.float32)
    query = e[[0, 1]]
    doc = np.stack([e[0], (e[1] + e[2]) / np.sqrt(2)])
    assert maxsim(query, doc) == pytest.approx((1.0 + 1 / np.sqrt(2)) / 2)
    assert maxsim(query, e[[5]]) == pytest.approx(0.0)
    with pytest.raises(ValueError):
        maxsim(query, np.zeros((0, TOKEN_DIMS), dtype=np.float32))


def test_token_format_names_the_dimensions():
    assert TOKEN_FORMAT.endswith(f"-{TOKEN_DIMS}")


SCORED = [("a", 1.0), ("b", 0.8), ("c", 0.6), ("d", 0.5), ("e", 0.1)]


def test_head_blend_with_weight_zero_keeps_the_order():
    out = head_blend(SCORED, {"c": 9.0, "b": 1.0}, 0.0, 3)
    assert [b.id for b in out] == ["a", "b", "c", "d", "e"]


def test_head_blend_reorders_only_the_head_and_keeps_the_tail_below():
    out = head_blend(SCORED, {"a": 0.0, "b": 0.1, "c": 1.0}, 0.6, 3)
    ids = [b.id for b in out]
    assert ids[:3] == ["c", "a", "b"]  # c: 0.4·0 + 0.6·1 beats a: 0.4·1 + 0
    assert ids[3:] == ["d", "e"]
    assert max(b.score for b in out[3:]) <= min(b.score for b in out[:3])
    assert [b.reranked for b in out] == [True, True, True, False, False]


def test_head_blend_gives_unscored_head_items_the_worst_late_score():
    out = head_blend(SCORED, {"b": 0.2, "c": 0.9}, 1.0, 3)
    assert [b.id for b in out][:3] == ["c", "a", "b"]  # a unscored: 0, ties b (0) keep order
    assert out[1].rerank_norm == 0.0 and not out[1].reranked


def test_head_blend_checks_its_arguments():
    assert head_blend([], {}, 0.5, 3) == []
    with pytest.raises(ValueError):
        head_blend(SCORED, {}, 1.5, 3)
    with pytest.raises(ValueError):
        head_blend(SCORED, {}, 0.5, 0)
    with pytest.raises(ValueError):
        head_blend([("a", float("nan"))], {}, 0.5, 3)


def test_late_score_takes_back_the_advantage_of_length():
    e = np.eye(TOKEN_DIMS, dtype=np.float32)
    query = e[[0]]
    short, long_ = e[[0, 1]], e[[0, 1, 2, 3, 4, 5, 6, 7]]
    assert maxsim(query, short) == maxsim(query, long_) == pytest.approx(1.0)
    assert late_score(query, short) == pytest.approx(1.0)
    assert late_score(query, short, 0.05) - late_score(query, long_, 0.05) == pytest.approx(
        0.05 * np.log(4)
    )
    with pytest.raises(ValueError):
        late_score(query, short, -0.1)
