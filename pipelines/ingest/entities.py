"""Entity extraction and canonicalisation (spaCy NER + rules for technical terms).

Pipeline for one text (run over batches by :class:`pipelines.ingest.extractor.EntityExtractor`):

1. spaCy NER (only the ``ner`` component and whatever it listens to run; tagger, parser,
   lemmatizer... are disabled for speed), on texts with a capitalised word that may be a
   name (:mod:`pipelines.ingest.ner_filter`). Spans whose label is not in
   :attr:`EntityConfig.keep_labels` are discarded (dates, times, numbers, money, percent...);
   the others are trimmed to their name or dropped when they are capitalised common words,
   interjections or greetings (:mod:`pipelines.ingest.span_filter`).
2. Rule-based technical terms (:func:`technical_terms`): inline code in backticks, file paths,
   CamelCase / camelCase, snake_case, letter+digit names ("Neo4j", "GPT4"), versions
   ("v1.2.3", "2.0.1", "Python 3.11") get kind ``TECH``; double-quoted Title Case phrases
   ("The Great Gatsby") get ``WORK_OF_ART``. Overlaps are resolved so that the same characters
   are never counted twice: *strong* rule spans (backticks, paths, file names, bare versions,
   snake_case, dotted identifiers) replace overlapping NER spans (spaCy tags "v1.2.3" as ORG);
   *weak* ones (CamelCase, letter+digit, "Name 3.11", quoted titles) yield to NER ("GitHub"
   stays ORG). NER spans overlapping a URL or e-mail address are dropped.
3. Every candidate is keyed by :func:`canonicalize` and filtered by :func:`is_valid_entity`.
4. Mentions with the same key are merged: ``name`` is the most frequent cleaned surface form
   (first seen wins ties), ``kind`` the most frequent NER label (``TECH`` / rule kinds only when
   no NER label was seen), ``count`` the number of mentions.

Entity resolution is deliberately conservative (peers over-merge and duplicate): keys differ
only by case, Unicode compatibility forms, whitespace, surrounding punctuation, a possessive
"'s", a leading "the", the explicit alias table, and, for a one-word identifier, the
underscores and hyphens between its letters and digits (``user_id``, ``userId``, ``user-id``
and ``USER_ID`` are one key, :func:`fold_identifier`). Accents and other inner punctuation are
kept ("Zoë" != "Zoe", "Node.js" != "Nodejs"); fuzzy merging belongs to a reviewable
consolidation step, not to the write path.

Fenced code blocks are not read for entities (``EntityConfig.skip_code_blocks``): pasted code
would make every identifier, tag and literal of a file an entity. Names discussed in prose,
inline code in backticks included, are still found. Whether a candidate becomes a graph entity
at all is decided against the space (:mod:`pipelines.ingest.entity_graph`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from typing import NamedTuple

from pipelines.ingest.config import DEFAULT_INGEST_CONFIG, EntityConfig
from pipelines.language import current

__all__ = [
    "TECH_LABEL",
    "TITLE_LABEL",
    "EntityMention",
    "TermSpan",
    "canonicalize",
    "cooccurrence_pairs",
    "fold_identifier",
    "is_valid_entity",
    "merge_mentions",
    "technical_terms",
]

TECH_LABEL = "TECH"
"""Kind of rule-based technical terms."""
TITLE_LABEL = "WORK_OF_ART"
"""Kind of double-quoted Title Case names (book, song, film, project titles)."""
_RULE_KINDS = frozenset({TECH_LABEL, TITLE_LABEL})

_DEFAULT_ENTITY_CONFIG = DEFAULT_INGEST_CONFIG.entities


@dataclass(frozen=True, slots=True)
class EntityMention:
    """An entity mentioned in one text (all its mentions merged by canonical key)."""

    name: str
    """Most common cleaned surface form, e.g. "Eiffel Tower"."""
    key: str
    """Canonical key (:func:`canonicalize`), e.g. "eiffel tower"."""
    kind: str
    """spaCy label (PERSON, ORG, GPE, ...) or ``TECH`` for rule-based technical terms."""
    count: int
    """Number of mentions in the text."""


# --------------------------------------------------------------------------- canonical keys

_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "`": "'"})
# Stripped from both ends. "." "_" "#" "+" "@" "/" "~" are kept: they are meaningful in
# technical names (".env", "C#", "C++", "__init__", "@types", "/etc").
_EDGE_CHARS = "\"'«»‹›()[]{}<>,;:!?¡¿*|=\u2026\u2013\u2014-"
_WS = re.compile(r"\s+")
_POSSESSIVE = re.compile(r"(?:'s|(?<=s)')$", re.IGNORECASE)
_ABBREVIATION = re.compile(r"(?:\b\w\.){2,}$")  # "U.S.", "a.m."


def _strip_edges(text: str) -> str:
    """Strip surrounding quotes/brackets/punctuation and a possessive; keep abbreviations."""
    previous = None
    while previous != text:
        previous = text
        text = text.strip().strip(_EDGE_CHARS).strip()
        if text.endswith(".") and not _ABBREVIATION.search(text):
            text = text.rstrip(".")
        text = _POSSESSIVE.sub("", text)
    return text


def _clean_surface(text: str) -> str:
    """Cleaned display form of a span: NFC, straight quotes, no edges/possessive/leading "the"."""
    text = _WS.sub(" ", unicodedata.normalize("NFC", text).translate(_QUOTES))
    text = _strip_edges(text)
    without_the = current().lexicon.leading_article.sub("", text)
    return without_the if without_the else text


_ONE_WORD_IDENTIFIER = re.compile(r"[^\W_][\w-]*|_+[^\W_][\w-]*")
_INNER_SEPARATOR = re.compile(r"(?<=[^\W_])[_-]+(?=[^\W_])")


def fold_identifier(key: str) -> str:
    """A one-word key without the underscores and hyphens between its letters and digits.

    ``user_id`` / ``user-id`` -> ``userid`` (case was folded before: ``userId`` and
    ``USER_ID`` land on the same key); ``utf-8`` -> ``utf8``; leading and trailing underscores
    stay (``__init__``); keys with spaces, dots or slashes are left alone.
    """
    if _ONE_WORD_IDENTIFIER.fullmatch(key):
        return _INNER_SEPARATOR.sub("", key)
    return key


def _base_key(name: str) -> str:
    """Canonical key without aliases; iterated to a fixed point so that it is idempotent."""
    text = name
    for _ in range(8):
        previous = text
        text = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
        text = _strip_edges(unicodedata.normalize("NFKC", _WS.sub(" ", text)))
        without_the = _strip_edges(current().lexicon.leading_article.sub("", text))
        text = fold_identifier(without_the if without_the else text)
        if text == previous:
            break
    return text


@lru_cache(maxsize=64)
def _alias_table(aliases: tuple[tuple[str, str], ...]) -> Mapping[str, str]:
    return {_base_key(alias): _base_key(target) for alias, target in aliases}


def canonicalize(name: str, aliases: tuple[tuple[str, str], ...] | None = None) -> str:
    """Return the canonical key of an entity name.

    Steps: Unicode NFKC; typographic quotes made straight; whitespace collapsed; case-folded;
    surrounding quotes, brackets and punctuation stripped (a trailing period only when it does
    not end an abbreviation such as "U.S."); possessive "'s" / trailing "'" after s removed; a
    leading "the" removed (unless nothing would remain); a one-word identifier's inner
    underscores and hyphens removed (:func:`fold_identifier`); finally the alias table maps
    the key (``aliases`` defaults to :attr:`EntityConfig.aliases`; pass ``()`` for none).

    >>> canonicalize("  The  Eiffel Tower's ")
    'eiffel tower'
    >>> canonicalize("NYC")
    'new york city'
    """
    key = _base_key(name)
    table = _alias_table(_DEFAULT_ENTITY_CONFIG.aliases if aliases is None else aliases)
    return table.get(key, key)


# --------------------------------------------------------------------------- validity

_HAS_LETTER = re.compile(r"[^\W\d_]")
# Markup, operators and code punctuation inside a key: fragments of code or formatting
# ("task 2:** fix", "method='sha256", "${api_key}", "income(db"), not names.
_MARKUP = re.compile(r"[*{}$=;!?<>\"\\|`()\[\]]|://|:\s|:$")
# A number with a unit or a version without a name: "320ms", "768px", "v8.39", "2.3.1".
_MEASUREMENT = re.compile(r"v?\d+(?:[.,]\d+)*[a-z%]{0,3}", re.IGNORECASE)


def is_valid_entity(
    name: str, label: str | None = None, config: EntityConfig | None = None
) -> bool:
    """Whether ``name`` (with spaCy ``label``, or ``TECH``) should become a graph entity.

    Rejected: labels outside :attr:`EntityConfig.keep_labels` (the rule kinds ``TECH`` and
    ``WORK_OF_ART`` are always allowed); names containing a line break; keys shorter than
    ``min_chars`` (single characters) or longer than ``max_chars`` / ``max_words``; names
    without a letter (numbers, punctuation, IP addresses); bare versions and numbers with a
    unit ("2.3.1", "v8.39", "320ms": attributes, like dates, not things; "Python 3.11" keeps
    its name); keys with markup or code punctuation inside ("task 2:** fix", "${api_key}");
    names whose lettered words are all stop words, pronouns or generic words ("today",
    "something", "the guys", "at 3.5"); for quoted titles (``WORK_OF_ART`` from the rules)
    only pronouns and generic words, since titles may be stop words ("Becoming").
    """
    cfg = config or _DEFAULT_ENTITY_CONFIG
    if "\n" in name or "\r" in name:
        return False
    return _valid_key(canonicalize(name, cfg.aliases), label, cfg)


def _speaker_words(speakers: Iterable[str | None]) -> frozenset[str]:
    """The speakers' names and each of their words, case-folded ("Ana Lima": "ana lima",
    "ana", "lima")."""
    out: set[str] = set()
    for name in speakers:
        folded = _WS.sub(" ", name or "").strip().casefold()
        if folded:
            out.add(folded)
            out.update(folded.split())
    return frozenset(out)


def _valid_key(key: str, label: str | None, cfg: EntityConfig) -> bool:
    if label is not None and label not in cfg.keep_labels and label not in _RULE_KINDS:
        return False
    if not cfg.min_chars <= len(key) <= cfg.max_chars:
        return False
    words = key.split()
    if len(words) > cfg.max_words:
        return False
    if not _HAS_LETTER.search(key) or _MEASUREMENT.fullmatch(key) or _MARKUP.search(key):
        return False
    lexicon = current().lexicon
    if key in lexicon.generic_words or key in lexicon.common_acronyms:
        return False
    if label == TITLE_LABEL:
        # A quoted Title Case name may be made of stop words ("Becoming", "Being There").
        return True
    lettered = [w for w in words if _HAS_LETTER.search(w)]
    return not all(w in lexicon.stop_words or w in lexicon.generic_words for w in lettered)


# --------------------------------------------------------------------------- technical terms

_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+|\b[\w.+-]+@[\w-]+\.[\w.-]+", re.IGNORECASE)
_FILE_EXTENSIONS = (
    "py|pyi|ipynb|js|mjs|cjs|ts|tsx|jsx|json|yaml|yml|toml|ini|cfg|conf|env|md|rst|txt|csv|"
    "tsv|sql|cypher|rs|go|java|kt|scala|c|h|cc|cpp|hpp|cs|rb|php|swift|sh|bash|zsh|ps1|html|"
    "css|scss|xml|lock|proto|gradle|dockerfile|tf|vue|svelte|parquet|log"
)
# (pattern, strong). Strong patterns are unambiguous code shapes and override an overlapping
# NER span (spaCy tags "v1.2.3" or "main.py" as ORG); weak ones yield to NER ("GitHub" is ORG).
_TECH_PATTERNS: tuple[tuple[re.Pattern[str], bool], ...] = (
    # Paths: absolute, home- or dot-relative, or relative with at least two separators.
    # Not after "<": "</body>" is a closing tag, not the path "/body".
    (re.compile(r"(?<![\w/:.<])(?:~|\.{1,2})?/[\w.@+-]+(?:/[\w.@+-]+)*/?"), True),
    (re.compile(r"(?<![\w/:])[\w.@+-]+(?:/[\w.@+-]+){2,}/?"), True),
    # File names and relative paths ending in a known extension.
    (
        re.compile(rf"(?<![\w/:.])(?:[\w.@+-]+/)*[\w@+-][\w.@+-]*\.(?:{_FILE_EXTENSIONS})\b", re.I),
        True,
    ),
    # Versions: "v1.2", "2.0.1", and a name followed by a dotted version ("Python 3.11").
    (re.compile(r"(?<![\w.])v\d+(?:\.\d+){1,3}(?:-[\w.]+)?\b"), True),
    (re.compile(r"(?<![\w.])\d+\.\d+\.\d+(?:-[\w.]+)?\b(?!\.\d)"), True),
    (re.compile(r"\b[A-Z][\w+#-]*[A-Za-z0-9+#] v?\d+(?:\.\d+){1,3}\b(?!\.\d)"), False),
    # snake_case / SCREAMING_SNAKE, dotted identifiers (torch.nn.functional, os.path.join()).
    (re.compile(r"(?<![\w.])_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*\b"), True),
    (re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\(\)"), True),
    (re.compile(r"(?<![\w.])[a-z_][a-z0-9_]+(?:\.[a-z_][a-z0-9_]+){2,}\b"), True),
    # CamelCase ("FastAPI", "GitHub"), camelCase ("iPhone", "useState").
    (re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z]+[a-z0-9]*)+\b"), False),
    (re.compile(r"\b[a-z]+(?:[A-Z]+[a-z0-9]*)+\b"), False),
    # Letters with digits inside or at the end ("Neo4j", "GPT4", "K8s", "i18n").
    (re.compile(r"\b[A-Za-z]{2,}\d+[A-Za-z0-9]*\b|\b[A-Za-z]\d+[A-Za-z]+\b"), False),
)
_BACKTICK = re.compile(r"`([^`\n]{1,80})`")
_DOUBLE_QUOTED = re.compile(r"[\"“]([^\"“”\n]{1,60})[\"”]")
_SENTENCE_PUNCT = re.compile(r"[.!?;:]\s")


def _is_title(phrase: str) -> bool:
    """A short Title Case phrase: capitalised first word, other words capitalised or minor.

    Rejects quoted speech: more than six words, inner sentence punctuation, or a first word
    that is the pronoun "I" ("I love you" is a quote, not a name).
    """
    words = phrase.split()
    if not 1 <= len(words) <= 6 or _SENTENCE_PUNCT.search(phrase):
        return False
    first = words[0]
    if not (first[:1].isupper() or first[:1].isdigit()):
        return False
    if first == "I" or first.casefold().startswith("i'"):
        return False
    return all(
        w[:1].isupper() or w[:1].isdigit() or w.casefold() in current().lexicon.title_minor_words
        for w in words[1:]
    )


class TermSpan(NamedTuple):
    """A rule-based entity span in a text."""

    start: int
    end: int
    surface: str
    kind: str
    strong: bool
    """Unambiguous code shape (path, file, version, identifier, backticks): overrides NER."""


def _mask_urls(text: str) -> str:
    return _URL.sub(lambda m: " " * len(m.group(0)), text)


def technical_terms(text: str) -> list[TermSpan]:
    """Rule-based entity spans, non-overlapping, in text order.

    Patterns are tried in priority order (backticks, double-quoted titles, paths, file names,
    versions, identifiers, CamelCase, letter+digit names); a later match that overlaps an
    earlier one is dropped, so "src/app/main.py" is one path rather than a path plus a file
    name. Trailing sentence punctuation is trimmed. URLs and e-mail addresses are masked first
    and never produce terms. Spans are candidates: :func:`is_valid_entity` still applies.
    """
    masked = _mask_urls(text)
    spans: list[TermSpan] = []

    def add(start: int, end: int, kind: str, strong: bool) -> None:
        if not any(start < span.end and span.start < end for span in spans):
            spans.append(TermSpan(start, end, text[start:end], kind, strong))

    for match in _BACKTICK.finditer(masked):
        inner = match.group(1)
        start = match.start(1) + len(inner) - len(inner.lstrip())
        end = match.end(1) - (len(inner) - len(inner.rstrip()))
        if end > start and len(inner.split()) <= 4:
            add(start, end, TECH_LABEL, True)
    for match in _DOUBLE_QUOTED.finditer(masked):
        if _is_title(match.group(1)) and match.group(1) == match.group(1).strip():
            add(match.start(1), match.end(1), TITLE_LABEL, False)
    for pattern, strong in _TECH_PATTERNS:
        for match in pattern.finditer(masked):
            start, end = match.span()
            while end > start and (
                masked[end - 1] in ".,;:!?"
                or (
                    masked[end - 1] == ")"
                    and masked.count("(", start, end) < masked.count(")", start, end)
                )
            ):
                end -= 1
            if end > start:
                add(start, end, TECH_LABEL, strong)
    spans.sort()
    return spans


# --------------------------------------------------------------------------- merging


def merge_mentions(candidates: Iterable[tuple[str, str, str]]) -> list[EntityMention]:
    """Merge ``(surface_name, key, kind)`` candidates by key into :class:`EntityMention`.

    ``name`` = most frequent surface form (first seen wins ties); ``kind`` = most frequent
    NER label, rule kinds only if no NER label was seen (first seen wins ties); ``count`` =
    number of candidates. Output is ordered by first appearance.
    """
    names: dict[str, Counter[str]] = {}
    kinds: dict[str, Counter[str]] = {}
    for name, key, kind in candidates:
        names.setdefault(key, Counter())[name] += 1
        kinds.setdefault(key, Counter())[kind] += 1
    merged: list[EntityMention] = []
    for key, name_counts in names.items():
        kind_counts = kinds[key]
        ner_kinds = Counter({k: c for k, c in kind_counts.items() if k not in _RULE_KINDS})
        kind = (ner_kinds or kind_counts).most_common(1)[0][0]
        merged.append(
            EntityMention(
                name=name_counts.most_common(1)[0][0],
                key=key,
                kind=kind,
                count=sum(name_counts.values()),
            )
        )
    return merged


def cooccurrence_pairs(
    mentions_per_memory: Iterable[Iterable[EntityMention | str]],
) -> dict[tuple[str, str], int]:
    """Count, for every unordered pair of entity keys, the memories mentioning both.

    Input is one iterable per memory, of :class:`EntityMention` or plain keys. Keys are
    de-duplicated within a memory, so the weight of ``(a, b)`` (always ``a < b``) is the number
    of memories in which both appear, independent of mention counts.
    """
    weights: Counter[tuple[str, str]] = Counter()
    for mentions in mentions_per_memory:
        keys = sorted({m.key if isinstance(m, EntityMention) else m for m in mentions})
        weights.update(combinations(keys, 2))
    return dict(weights)
