"""Running spaCy over a batch of texts: the entity mentions of each
(:mod:`pipelines.ingest.entities` says what an entity is and how candidates are keyed,
filtered and merged).

Long texts are read in segments (:func:`segment`), spaCy's batches are bounded in texts and
characters (:func:`char_batches`), and only the components NER needs run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from pipelines.ingest.config import EntityConfig
from pipelines.ingest.entities import (
    _DEFAULT_ENTITY_CONFIG,
    TECH_LABEL,
    TITLE_LABEL,
    EntityMention,
    _clean_surface,
    _mask_urls,
    _speaker_words,
    _valid_key,
    canonicalize,
    merge_mentions,
    technical_terms,
)
from pipelines.ingest.ner_filter import ner_needed, ner_ranges
from pipelines.ingest.span_filter import Casing, keep_term, math_ranges, refine_span
from pipelines.ingest.text import strip_code_blocks
from pipelines.language.lexicon import dictionary_words

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

__all__ = ["EntityExtractor", "char_batches", "segment"]


def segment(text: str, max_chars: int) -> list[str]:
    """``text`` cut into pieces of at most ``max_chars`` characters, at the last paragraph
    break, else line break, else space before the limit (a hard cut only without any)."""
    parts: list[str] = []
    while len(text) > max_chars:
        window = text[:max_chars]
        cut = max(window.rfind("\n\n"), 0) or max(window.rfind("\n"), 0)
        cut = cut or max(window.rfind(" "), 0) or max_chars
        parts.append(text[:cut])
        text = text[cut:]
    parts.append(text)
    return parts


def char_batches(texts: Sequence[str], max_texts: int, max_chars: int) -> Iterator[list[str]]:
    """Consecutive runs of ``texts`` of at most ``max_texts`` texts and ``max_chars``
    characters (a text longer than ``max_chars`` is a run of its own)."""
    batch: list[str] = []
    size = 0
    for text in texts:
        if batch and (len(batch) >= max_texts or size + len(text) > max_chars):
            yield batch
            batch, size = [], 0
        batch.append(text)
        size += len(text)
    if batch:
        yield batch


_NER_COMPONENT_FACTORIES = frozenset({"ner", "entity_ruler", "span_ruler", "beam_ner"})


class EntityExtractor:
    """Batch entity extraction with a loaded spaCy pipeline.

    Only the entity components (``ner``, entity/span rulers) and the shared ``tok2vec`` /
    ``transformer`` components they listen to run; all other components are disabled per call
    (the ``nlp`` object is not modified, so it can be shared). A pipeline without NER (e.g.
    ``spacy.blank("en")``) still yields rule-based technical terms.
    """

    def __init__(self, nlp: Language, config: EntityConfig | None = None) -> None:
        self.nlp = nlp
        self.config = config or _DEFAULT_ENTITY_CONFIG
        needed: set[str] = set()
        for name in nlp.pipe_names:
            factory = nlp.get_pipe_meta(name).factory
            if factory in _NER_COMPONENT_FACTORIES or name == "ner":
                needed.add(name)
        for name in nlp.pipe_names:
            listeners = getattr(nlp.get_pipe(name), "listening_components", None) or ()
            if needed.intersection(listeners):
                needed.add(name)
        self.dictionary = dictionary_words(nlp)
        """The language's words, and its verbs (span filter evidence)."""
        self.ordinary = dictionary_words(nlp, ("verb",))
        self.enabled_pipes: tuple[str, ...] = tuple(n for n in nlp.pipe_names if n in needed)
        self.disabled_pipes: tuple[str, ...] = tuple(n for n in nlp.pipe_names if n not in needed)

    def extract(self, text: str) -> list[EntityMention]:
        """Entities of a single text (see :meth:`extract_batch`)."""
        return self.extract_batch([text])[0]

    def extract_batch(
        self,
        texts: Sequence[str],
        check: Callable[[], None] | None = None,
        speakers: Sequence[str | None] | None = None,
    ) -> list[list[EntityMention]]:
        """Entities of each text, in input order, one merged mention per canonical key.

        Fenced code blocks are blanked first (``config.skip_code_blocks``); then ``nlp.pipe``
        runs, with unneeded components disabled, over the texts that may hold a name
        (:func:`pipelines.ingest.ner_filter.ner_needed`); each recognised span is trimmed to
        its name or dropped against the batch's casing and the ``speakers`` (one per text,
        :func:`pipelines.ingest.span_filter.refine_span`); rule-based terms are added,
        canonicalised, filtered and merged (module doc). ``check`` is called before each of
        spaCy's batches (it raises to stop).
        """
        if not texts:
            return []
        cfg = self.config
        if cfg.skip_code_blocks:
            texts = [strip_code_blocks(t) if "```" in t else t for t in texts]
        owners, segments = _segments(texts, cfg.segment_chars)
        per_text: list[list[tuple[str, str, str]]] = [[] for _ in texts]
        ranges = self._ner_ranges(segments)
        pieces = [part[s:e] for part, rs in zip(segments, ranges, strict=True) for s, e in rs]
        docs = self._pipe(pieces, check)
        casing = Casing.of(segments, self.dictionary, self.ordinary)
        names = _speaker_words(speakers or ())
        for owner, part, read in zip(owners, segments, ranges, strict=True):
            ents = []
            for start, _ in read:
                for e in next(docs).ents:
                    kept = refine_span(
                        part, start + e.start_char, start + e.end_char, casing, names, e.label_
                    )
                    if kept is not None:
                        ents.append((kept[0], kept[1], part[kept[0] : kept[1]], e.label_))
            per_text[owner].extend(self._candidates(part, ents, casing))
        return [merge_mentions(candidates) for candidates in per_text]

    def _ner_ranges(self, segments: Sequence[str]) -> list[list[tuple[int, int]]]:
        """Per segment, the character ranges spaCy reads: its sentences that may hold a name
        (``config.ner_sentences``), else the whole segment when it may hold one."""
        if self.config.ner_sentences:
            return ner_ranges(segments)
        needed = ner_needed(segments)
        return [[(0, len(p))] if r else [] for p, r in zip(segments, needed, strict=True)]

    def _candidates(
        self, part: str, ents: Iterable[tuple[int, int, str, str]], casing: Casing
    ) -> Iterator[tuple[str, str, str]]:
        """``(name, key, kind)`` of the kept spans of one segment, NER and rule terms."""
        cfg = self.config
        math = math_ranges(part)
        for start, end, surface, kind in self._spans(part, ents):
            # Multi-line spans are NER noise, not names; nor are the letters of formulas.
            if "\n" in surface or "\r" in surface:
                continue
            if math and any(a <= start and end <= b for a, b in math):
                continue
            name = _clean_surface(surface)
            if kind == TECH_LABEL and not keep_term(name, casing):
                continue
            key = canonicalize(surface, cfg.aliases)
            if _valid_key(key, kind, cfg):
                yield name, key, kind

    def _pipe(self, texts: Sequence[str], check: Callable[[], None] | None = None) -> Iterator[Doc]:
        """``nlp.pipe`` over ``texts`` in order, in batches of at most ``batch_size`` texts
        and ``pipe_chars`` characters (a batch holds at least one text)."""
        cfg = self.config
        disable = list(self.disabled_pipes)
        for batch in char_batches(texts, cfg.batch_size, cfg.pipe_chars):
            if check is not None:
                check()
            yield from self.nlp.pipe(batch, batch_size=len(batch), disable=disable)

    def _spans(
        self, text: str, ents: Iterable[tuple[int, int, str, str]]
    ) -> list[tuple[int, int, str, str]]:
        """Resolve NER spans ``(start, end, text, label)`` against rule spans (precedence in
        the module docstring)."""
        masked = _mask_urls(text)
        # NER spans with an excluded label (DATE, CARDINAL...) neither count nor block rules;
        # spans overlapping a URL / e-mail address are dropped.
        ner = [
            (start, end, surface, label)
            for start, end, surface, label in ents
            if label in self.config.keep_labels and masked[start:end] == surface
        ]
        if not self.config.extract_technical_terms:
            return ner
        terms = technical_terms(text)
        # A quoted title also overrides NER spans strictly inside it ("Charlotte's Web" is one
        # title, not the place "Charlotte").
        overriding = [
            t
            for t in terms
            if t.strong
            or (
                t.kind == TITLE_LABEL
                and any(
                    t.start <= s and e <= t.end and e - s < t.end - t.start for s, e, _, _ in ner
                )
            )
        ]
        spans = [
            span
            for span in ner
            if not any(span[0] < t.end and t.start < span[1] for t in overriding)
        ]
        spans.extend((t.start, t.end, t.surface, t.kind) for t in overriding)
        for term in terms:
            if term in overriding:
                continue
            if not any(term.start < e and s < term.end for s, e, _, _ in spans):
                spans.append((term.start, term.end, term.surface, term.kind))
        spans.sort()
        return spans


def _segments(texts: Sequence[str], max_chars: int) -> tuple[list[int], list[str]]:
    """A long text is read in segments (spaCy refuses texts over nlp.max_length, and its
    memory grows with the document): each segment and the index of the text it came from."""
    owners: list[int] = []
    segments: list[str] = []
    for i, text in enumerate(texts):
        for part in segment(text, max_chars):
            owners.append(i)
            segments.append(part)
    return owners, segments
