"""Token vectors for late interaction (MaxSim) with the embedding model: no new weights.

all-MiniLM-L6-v2 computes one vector per token before it averages them into the sentence
embedding. Keeping a few of those token vectors lets recall score a candidate the way
ColBERT does: for each query token, its best match among the candidate's tokens, averaged
over the query (``maxsim``). A turn that shares the question's *words in context* scores
high even when its averaged embedding is dominated by other words.

What is kept of a text (:func:`token_vectors`): the token vectors of the model's last layer,
without the [CLS]/[SEP] markers and without stop-word and punctuation pieces (they match
everything), projected to ``TOKEN_DIMS`` dimensions by a fixed random ±1 projection
(:func:`projection`, derived from a hash: the same on every machine and NumPy version) and
L2-normalised. Stored (:func:`pack`), each row is int8 (scaled so its largest component is
127): ``TOKEN_DIMS`` bytes per token, about 2 KB for a typical conversational turn.
:func:`unpack` re-normalises the rows, so the scale need not be stored.

Changing anything here that changes the stored bytes must change ``TOKEN_FORMAT``: recall
only compares vectors of the format it computes the query in, and the backfill job
(:mod:`pipelines.consolidate.token_vectors`) rewrites memories of any other format.

Pure: NumPy only, no I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

#: Dimensions of a stored token vector (the model's 384, randomly projected).
TOKEN_DIMS = 128
#: The stored format; recall and the backfill compare ``Memory.token_format`` with it.
TOKEN_FORMAT = f"maxsim-v1-{TOKEN_DIMS}"
#: Marker tokens of the BERT tokenizer that carry no word of the text.
SPECIAL_TOKENS = frozenset({"[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"})
#: Word pieces dropped before matching: function words, question words and punctuation
#: match nearly any text, and MaxSim averages over the query's tokens.
STOP_WORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
        "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
        "these", "they", "this", "to", "was", "will", "with", "i", "you", "he", "she", "we", "me",
        "my", "your", "what", "when", "where", "who", "how", "did", "do", "does", "why", "which",
        "have", "has", "had", "?", ".", ",", "'", "s",
    }
)  # fmt: skip
_PROJECTION_SEED = b"mnemograph late interaction projection v1"


def keep_positions(tokens: Sequence[str]) -> list[int]:
    """Positions of the tokens that take part in matching (no markers, no stop words).

    A text made only of stop words keeps every non-marker token (so it still has a vector),
    and a text of markers only keeps everything."""
    content = [i for i, t in enumerate(tokens) if t not in SPECIAL_TOKENS]
    kept = [i for i in content if tokens[i].lstrip("#").lower() not in STOP_WORDS]
    if kept:
        return kept
    return content or list(range(len(tokens)))


@lru_cache(maxsize=4)
def projection(dims_in: int, dims_out: int = TOKEN_DIMS) -> np.ndarray:
    """A fixed (dims_in, dims_out) matrix of ±1/√dims_out, from SHAKE-256 of a constant.

    Random ±1 projections preserve inner products about as well as Gaussian ones
    (Achlioptas 2003); a hash, unlike a seeded NumPy generator, gives the same matrix on
    every version, which stored vectors depend on."""
    if dims_in <= 0 or dims_out <= 0:
        raise ValueError("dimensions must be positive")
    n = dims_in * dims_out
    bits = np.unpackbits(
        np.frombuffer(hashlib.shake_256(_PROJECTION_SEED).digest((n + 7) // 8), dtype=np.uint8)
    )[:n]
    signs = bits.astype(np.float32) * 2.0 - 1.0
    out = (signs / np.float32(np.sqrt(dims_out))).reshape(dims_in, dims_out).astype(np.float32)
    out.setflags(write=False)
    return out


def _normalise_rows(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return (m / np.where(norms > 0.0, norms, 1.0)).astype(np.float32, copy=False)


def token_vectors(hidden: np.ndarray, tokens: Sequence[str]) -> np.ndarray:
    """A text's matching vectors: ``hidden`` (tokens, model dims) are the model's last-layer
    token vectors of the text (no padding), ``tokens`` their word pieces. Returns
    (kept tokens, TOKEN_DIMS) float32 with unit rows."""
    hidden = np.asarray(hidden, dtype=np.float32)
    if hidden.ndim != 2 or hidden.shape[0] != len(tokens):
        raise ValueError(f"hidden has shape {hidden.shape}, expected ({len(tokens)}, dims)")
    kept = hidden[keep_positions(tokens)]
    return _normalise_rows(kept @ projection(hidden.shape[1]))


def token_roles(vocabulary: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per token id of a vocabulary: whether it is a marker, and whether it is a stop word
    (the tests of :func:`keep_positions`, as lookup tables for :func:`batch_token_vectors`)."""
    marker = np.fromiter((t in SPECIAL_TOKENS for t in vocabulary), bool, len(vocabulary))
    stop = np.fromiter(
        (t.lstrip("#").lower() in STOP_WORDS for t in vocabulary), bool, len(vocabulary)
    )
    return marker, stop


def batch_token_vectors(
    hidden: np.ndarray,
    ids: np.ndarray,
    lengths: Sequence[int],
    roles: tuple[np.ndarray, np.ndarray],
) -> list[np.ndarray]:
    """:func:`token_vectors` of a padded batch at once: ``hidden`` (texts, positions, model
    dims), ``ids`` (texts, positions) the token ids, ``lengths`` each text's unpadded length,
    ``roles`` :func:`token_roles` of the vocabulary. The same vectors, one projection for all."""
    marker, stop = roles
    present = np.arange(ids.shape[1])[None, :] < np.asarray(lengths)[:, None]
    content = present & ~marker[ids]
    kept = content & ~stop[ids]
    for row in np.flatnonzero(~kept.any(axis=1)):  # keep_positions' fall-backs
        kept[row] = content[row] if content[row].any() else present[row]
    rows = np.asarray(hidden, dtype=np.float32)[kept]
    vectors = _normalise_rows(rows @ projection(hidden.shape[2]))
    return np.split(vectors, np.cumsum(kept.sum(axis=1))[:-1])


def pack(vectors: np.ndarray) -> bytes:
    """Rows of ``vectors`` as int8, each scaled so that its largest component is ±127."""
    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim != 2 or v.shape[1] != TOKEN_DIMS:
        raise ValueError(f"expected (tokens, {TOKEN_DIMS}) vectors, got {v.shape}")
    peak = np.abs(v).max(axis=1, keepdims=True)
    q = np.round(v / np.where(peak > 0.0, peak, 1.0) * 127.0)
    return q.astype(np.int8).tobytes()


def unpack(blob: bytes | bytearray | Sequence[int]) -> np.ndarray:
    """Stored bytes back to (tokens, TOKEN_DIMS) float32 unit rows. Accepts what the Neo4j
    driver returns for a ``byte[]`` property (``bytes``/``bytearray``)."""
    raw = np.frombuffer(bytes(blob), dtype=np.int8)
    if raw.size == 0 or raw.size % TOKEN_DIMS:
        raise ValueError(f"{raw.size} bytes is not a whole number of {TOKEN_DIMS}-byte tokens")
    return _normalise_rows(raw.reshape(-1, TOKEN_DIMS).astype(np.float32))


def unpack_concatenated(blobs: Sequence[bytes | bytearray]) -> np.ndarray:
    """The token vectors of several stored texts as one (tokens, TOKEN_DIMS) matrix: one
    decode for all of them (a session's memories, scored together)."""
    return unpack(b"".join(bytes(b) for b in blobs))


def late_score(query: np.ndarray, doc: np.ndarray, length_penalty: float = 0.0) -> float:
    """:func:`maxsim` minus ``length_penalty · ln(document tokens)``.

    A longer text offers each query token more chances of a close match, so raw MaxSim
    favours long memories; under a token budget that costs records (on LoCoMo, weight 0.6
    without the penalty made the top 10 10 % longer and the flat 1K context lost 11
    questions). The penalty takes that advantage back."""
    if length_penalty < 0.0:
        raise ValueError("length_penalty must be >= 0")
    return maxsim(query, doc) - length_penalty * float(np.log(doc.shape[0]))


def maxsim(query: np.ndarray, doc: np.ndarray) -> float:
    """ColBERT's late interaction: the mean over query tokens of the best cosine with any
    document token (rows of both are unit vectors). In [-1, 1]."""
    if query.size == 0 or doc.size == 0:
        raise ValueError("query and document need at least one token vector each")
    return float((query @ doc.T).max(axis=1).mean())
