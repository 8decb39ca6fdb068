"""Encoding gate: decide whether an incoming event is stored, merged or rejected.

Three independent signals, each in [0, 1]:

* **novelty** (:func:`novelty`) — how much *new information* the text adds to recent context,
  measured with DEFLATE (the compressor inside gzip) rather than embeddings::

      novelty = (C(context + text) - C(context)) / C(text)

  where ``C`` is the compressed size. Redundant text is cheap to compress after the context
  (back-references), so the ratio is low; new information costs about as much as on its own,
  so the ratio is near 1. Raw DEFLATE (no gzip header) is used so fixed container overhead does
  not inflate short texts; context is cut to the last ``novelty_context_chars`` characters
  because DEFLATE only references a 32 KiB window. Empty context gives 1.0; text that
  compresses to fewer than 10 bytes ("ok", "lol") gives 0.05.
* **salience** (:func:`salience`) — properties of the event alone: a rule-based speech-act
  score for short messages (noise, questions, corrections, commitments) and, for longer ones,
  a sum of capped features: named-entity proxies, numbers/dates, first-person commitments,
  emotion markers and length.
* **prediction error** (:func:`prediction_error`) — ``1 - max cosine`` between the event's
  embedding and recent embeddings: how badly recent memory predicts this event.

:func:`near_duplicate` finds a stored candidate that the event merely restates (embedding
similarity *and* a lexical check on content words, with numbers, capitalised names and negation
required to agree, so "I live in Paris" never merges into "I live in London").

:func:`decide` combines them and never decides silently: every :class:`GateDecision` carries a
reason and the signals. Order: ``force`` -> stored ("forced"); gate disabled -> stored;
near-duplicate -> merged; salience floor / novelty floor -> rejected; prediction error at or
above the bypass -> stored; otherwise the weighted mean against ``threshold + category offset``.
A missing prediction error (no embedding available) fails open: the score is re-weighted over
the available signals and the reason says so.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict

from pipelines.ingest.config import DEFAULT_INGEST_CONFIG, GateConfig
from pipelines.ingest.text import match_tokens, normalise_for_match
from pipelines.language import current

__all__ = [
    "DuplicateCandidate",
    "DuplicateMatch",
    "GateDecision",
    "GateSignals",
    "compute_signals",
    "decide",
    "near_duplicate",
    "novelty",
    "prediction_error",
    "salience",
    "salience_features",
]

_DEFAULT_GATE = DEFAULT_INGEST_CONFIG.gate
_TRIVIAL_COMPRESSED_BYTES = 10
_TRIVIAL_NOVELTY = 0.05


# --------------------------------------------------------------------------- novelty


def _deflate_size(data: bytes, level: int) -> int:
    compressor = zlib.compressobj(level, zlib.DEFLATED, -15)
    return len(compressor.compress(data) + compressor.flush())


def novelty(
    text: str,
    context_texts: Sequence[str],
    *,
    level: int = 6,
    max_context_chars: int = 30_000,
) -> float:
    """Compression novelty of ``text`` against ``context_texts`` (formula in module doc).

    ``context_texts`` are the recent or nearest stored memories, oldest first; the last
    ``max_context_chars`` characters are kept (0 means no context, hence 1.0). Returns a value
    in [0, 1].
    """
    data = text.encode("utf-8")
    own = _deflate_size(data, level)
    if own < _TRIVIAL_COMPRESSED_BYTES:
        return _TRIVIAL_NOVELTY
    context = "\n".join(t for t in context_texts if t.strip())
    context = context[-max_context_chars:] if max_context_chars > 0 else ""
    if not context:
        return 1.0
    memory = context.encode("utf-8") + b"\n"
    added = _deflate_size(memory + data, level) - _deflate_size(memory, level)
    return float(min(1.0, max(0.0, added / own)))


# --------------------------------------------------------------------------- salience

_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")


def _name_like(text: str) -> list[str]:
    """Capitalised words not starting a sentence, and acronyms anywhere (a cheap NER proxy)."""
    names: list[str] = []
    sentence_start = True
    for raw in text.split():
        word = raw.strip("\"'“”‘’()[]{},;:")
        capitalised = bool(word) and word not in current().gate.not_names and word[0].isupper()
        if capitalised and (not sentence_start or (len(word) > 1 and word.isupper())):
            names.append(word)
        sentence_start = raw.endswith((".", "!", "?"))
    return names


_SHORT_MESSAGE_CHARS = 50


def salience_features(text: str) -> dict[str, float]:
    """The named contributions that :func:`salience` adds up (useful in explanations).

    Short messages (at most 50 characters) get one speech-act feature: ``noise`` 0.02,
    ``commitment`` 0.8, ``correction`` 0.6, ``question`` 0.2, otherwise the long-form features
    below. Long-form features: ``base`` 0.1; ``entities`` 0.1 per capitalised word / acronym
    after the first word (max 0.3); ``numbers`` 0.1 per number or date word (max 0.2);
    ``commitment`` 0.2; ``correction`` 0.15; ``emotion`` 0.1 per emotion word or "!"
    (max 0.2); ``length`` up to 0.1 (log-scaled, saturating at ~1000 characters).
    """
    stripped = " ".join(text.split())
    if not stripped:
        return {"empty": 0.0}
    if len(stripped) <= _SHORT_MESSAGE_CHARS:
        if current().gate.noise.match(stripped):
            return {"noise": 0.02}
        if current().gate.commitment.search(stripped):
            return {"commitment": 0.8}
        if current().gate.correction.search(stripped):
            return {"correction": 0.6}
        if stripped.endswith("?"):
            return {"question": 0.2}
    names = _name_like(stripped)
    numbers = len(_NUMBER.findall(stripped)) + len(current().gate.date_word.findall(stripped))
    emotion = len(current().gate.emotion.findall(stripped)) + min(stripped.count("!"), 2)
    features = {
        "base": 0.1,
        "entities": min(0.3, 0.1 * len(names)),
        "numbers": min(0.2, 0.1 * numbers),
        "commitment": 0.2 if current().gate.commitment.search(stripped) else 0.0,
        "correction": 0.15 if current().gate.correction.search(stripped) else 0.0,
        "emotion": min(0.2, 0.1 * emotion),
        "length": min(0.1, 0.1 * math.log10(max(len(stripped), 10)) / 3.0),
    }
    return {name: value for name, value in features.items() if value > 0}


def salience(text: str) -> float:
    """Salience of an event in isolation, in [0, 1] (features in :func:`salience_features`)."""
    return float(min(1.0, sum(salience_features(text).values())))


# --------------------------------------------------------------------------- embeddings


def _unit_rows(vectors: ArrayLike) -> npt.NDArray[np.float64]:
    matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)  # a zero row stays zero


def _cosines(embedding: ArrayLike, others: ArrayLike) -> npt.NDArray[np.float64]:
    query = _unit_rows(embedding)[:1]
    matrix = _unit_rows(others)
    if matrix.shape[1] != query.shape[1]:
        raise ValueError(f"embedding dimension {query.shape[1]} != {matrix.shape[1]}")
    return (matrix @ query.T).ravel().clip(-1.0, 1.0)


def prediction_error(
    embedding: ArrayLike, recent_embeddings: Sequence[ArrayLike] | ArrayLike
) -> float:
    """``1 - max cosine(embedding, recent)``, clipped to [0, 1]; 1.0 when nothing is recent.

    Zero vectors have cosine 0 with everything. Raises ``ValueError`` on a dimension mismatch
    (mixing embedding models must never pass silently).
    """
    recent = np.asarray(recent_embeddings, dtype=np.float64)
    if recent.size == 0:
        return 1.0
    return float(min(1.0, max(0.0, 1.0 - float(_cosines(embedding, recent).max()))))


# --------------------------------------------------------------------------- near duplicates


@dataclass(frozen=True, slots=True)
class DuplicateCandidate:
    """A stored memory that an incoming event could merge into."""

    id: str
    text: str
    embedding: Sequence[float] | np.ndarray


@dataclass(frozen=True, slots=True)
class DuplicateMatch:
    """The candidate an event restates, with the evidence."""

    id: str
    cosine: float
    lexical: float
    """Jaccard similarity of the content (non-stop-word) tokens."""


_WORDS = re.compile(r"\w[\w'.-]*")


@dataclass(frozen=True, slots=True)
class TextProfile:
    """What must agree between two texts for one to be a restatement of the other."""

    normalised: str
    content: frozenset[str]
    """Tokens that are not stop words (all tokens if every token is a stop word)."""
    numbers: frozenset[str]
    names: frozenset[str]
    """Capitalised words that are not stop words ("Emma", "Boston"), case-folded."""
    negated: bool


def text_profile(text: str) -> TextProfile:
    tokens = match_tokens(text)
    content = frozenset(t for t in tokens if t not in current().lexicon.stop_words) or frozenset(
        tokens
    )
    names = frozenset(
        folded
        for word in _WORDS.findall(text)
        if word[:1].isupper()
        for folded in match_tokens(word)
        if folded not in current().lexicon.stop_words
    )
    return TextProfile(
        normalised=" ".join(tokens),
        content=content,
        numbers=frozenset(t for t in tokens if any(ch.isdigit() for ch in t)),
        names=names,
        negated=any(t in current().gate.negations or t.endswith("n't") for t in tokens),
    )


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def near_duplicate(
    embedding: ArrayLike,
    text: str,
    candidates: Sequence[DuplicateCandidate],
    config: GateConfig | None = None,
) -> DuplicateMatch | None:
    """The best candidate that ``text`` merely restates, or ``None``.

    A candidate qualifies when (a) its normalised text equals the event's (the embedding is
    then not consulted), or (b) all of: cosine >= ``merge_similarity``; Jaccard similarity of
    the content (non-stop-word) tokens >= ``merge_lexical``; the same numbers; the same
    capitalised names; the same negation polarity. So "I live in Paris" never merges into "I
    live in London", "3pm" into "4pm", or "I like it" into "I don't like it". Among qualifying
    candidates the highest (cosine, lexical) wins; ties keep the earlier candidate.
    Conservative by design: over-merging loses information, a missed duplicate only costs
    storage.
    """
    cfg = config or _DEFAULT_GATE
    if not candidates:
        return None
    mine = text_profile(text)
    cosines = _cosines(embedding, np.stack([np.asarray(c.embedding) for c in candidates]))
    best: DuplicateMatch | None = None
    for candidate, cosine in zip(candidates, cosines, strict=True):
        other = text_profile(candidate.text)
        lexical = _jaccard(mine.content, other.content)
        if other.normalised != mine.normalised and (
            cosine < cfg.merge_similarity
            or lexical < cfg.merge_lexical
            or other.numbers != mine.numbers
            or other.names != mine.names
            or other.negated != mine.negated
        ):
            continue
        match = DuplicateMatch(candidate.id, float(cosine), lexical)
        if best is None or (match.cosine, match.lexical) > (best.cosine, best.lexical):
            best = match
    return best


# --------------------------------------------------------------------------- decision


@dataclass(frozen=True, slots=True)
class GateSignals:
    """Inputs of :func:`decide`. ``prediction_error`` is ``None`` when no embedding exists."""

    novelty: float
    salience: float
    prediction_error: float | None
    category: str | None = None
    """Optional fact category of the event (e.g. "decision"): selects a threshold offset."""
    duplicate: DuplicateMatch | None = None


class GateDecision(BaseModel):
    """Outcome of the gate. ``signals`` is flat and JSON-serialisable (stored with the event)."""

    model_config = ConfigDict(frozen=True)

    decision: Literal["stored", "merged", "rejected"]
    signals: dict[str, float | str | None]
    reason: str
    merge_target: str | None = None


def _score(signals: GateSignals, cfg: GateConfig) -> tuple[float, bool]:
    """Weighted mean of the available signals; the flag tells whether PE was missing."""
    parts = [
        (cfg.novelty_weight, signals.novelty),
        (cfg.salience_weight, signals.salience),
    ]
    missing_pe = signals.prediction_error is None or not math.isfinite(signals.prediction_error)
    if not missing_pe:
        parts.append((cfg.prediction_error_weight, float(signals.prediction_error or 0.0)))
    total = sum(w for w, _ in parts)
    if total <= 0:  # only the prediction-error weight is positive and PE is missing
        return 1.0, missing_pe
    return sum(w * v for w, v in parts) / total, missing_pe


def decide(
    signals: GateSignals, config: GateConfig | None = None, force: bool = False
) -> GateDecision:
    """Store, merge or reject an event; the order of checks is in the module docstring."""
    cfg = config or _DEFAULT_GATE
    threshold = cfg.threshold + cfg.offset_for(signals.category)
    for name in ("novelty", "salience"):
        value = getattr(signals, name)
        if not math.isfinite(value):
            raise ValueError(f"gate signal {name} is not finite: {value!r}")
    score, missing_pe = _score(signals, cfg)
    dup = signals.duplicate
    record: dict[str, float | str | None] = {
        "novelty": round(signals.novelty, 4),
        "salience": round(signals.salience, 4),
        "prediction_error": None if missing_pe else round(float(signals.prediction_error or 0), 4),
        "score": round(score, 4),
        "threshold": round(threshold, 4),
        "category": signals.category,
        "duplicate_of": dup.id if dup else None,
        "duplicate_cosine": round(dup.cosine, 4) if dup else None,
        "duplicate_lexical": round(dup.lexical, 4) if dup else None,
    }

    def result(
        decision: Literal["stored", "merged", "rejected"], reason: str, target: str | None = None
    ) -> GateDecision:
        if missing_pe and decision != "merged":
            reason += "; prediction error unavailable, scored on novelty and salience"
        return GateDecision(decision=decision, signals=record, reason=reason, merge_target=target)

    if force:
        return result("stored", "forced")
    if not cfg.enabled:
        return result("stored", "gate disabled: stored verbatim")
    if dup is not None:
        return result(
            "merged",
            f"near-duplicate of {dup.id} (cosine {dup.cosine:.3f} >= {cfg.merge_similarity:.2f}, "
            f"lexical {dup.lexical:.2f} >= {cfg.merge_lexical:.2f})",
            dup.id,
        )
    if signals.salience < cfg.salience_floor:
        return result(
            "rejected", f"salience {signals.salience:.3f} below floor {cfg.salience_floor:.2f}"
        )
    if signals.novelty < cfg.novelty_floor:
        return result(
            "rejected", f"novelty {signals.novelty:.3f} below floor {cfg.novelty_floor:.2f}"
        )
    if not missing_pe and (signals.prediction_error or 0.0) >= cfg.prediction_error_bypass:
        return result(
            "stored",
            f"prediction error {signals.prediction_error:.3f} >= bypass "
            f"{cfg.prediction_error_bypass:.2f}",
        )
    if score >= threshold:
        return result("stored", f"score {score:.3f} >= threshold {threshold:.3f}")
    return result("rejected", f"score {score:.3f} below threshold {threshold:.3f}")


def compute_signals(
    text: str,
    embedding: ArrayLike | None,
    *,
    context_texts: Sequence[str] = (),
    recent_embeddings: Sequence[ArrayLike] | ArrayLike = (),
    candidates: Sequence[DuplicateCandidate] = (),
    category: str | None = None,
    config: GateConfig | None = None,
) -> GateSignals:
    """Compute all gate signals for one event (pure; the caller fetches the neighbourhood).

    With ``embedding=None`` prediction error is ``None`` and only an exact (normalised-text)
    duplicate can be detected.
    """
    cfg = config or _DEFAULT_GATE
    duplicate: DuplicateMatch | None = None
    if embedding is None:
        normalised = normalise_for_match(text)
        for candidate in candidates:
            if normalise_for_match(candidate.text) == normalised:
                duplicate = DuplicateMatch(candidate.id, 1.0, 1.0)
                break
    else:
        duplicate = near_duplicate(embedding, text, candidates, cfg)
    return GateSignals(
        novelty=novelty(
            text,
            context_texts,
            level=cfg.compression_level,
            max_context_chars=cfg.novelty_context_chars,
        ),
        salience=salience(text),
        prediction_error=None
        if embedding is None
        else prediction_error(embedding, recent_embeddings),
        category=category,
        duplicate=duplicate,
    )
