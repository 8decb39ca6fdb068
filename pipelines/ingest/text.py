"""Text helpers shared by the write path: content hashing, matching normalisation, sentences.

Content is stored verbatim; the functions here only derive *keys* from it.

* :func:`content_hash` is the idempotency / exact-duplicate key of a turn's content.
* :func:`normalise_for_match` and :func:`match_tokens` give a lossy, comparison-only form used
  by the lexical near-duplicate check and by fact de-duplication.
* :func:`split_sentences` is a small regex sentence splitter (no model needed).
* :func:`embedding_input` is what the embedding model sees for a memory ("speaker: text").
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

__all__ = [
    "content_hash",
    "embedding_input",
    "match_tokens",
    "normalise_for_match",
    "split_sentences",
    "strip_code_blocks",
]

_NEWLINES = re.compile(r"\r\n?|\u2028|\u2029")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
# A token is a run of word characters, optionally joined by one of . ' _ / - between word
# characters, so "v1.2.3", "don't", "snake_case", "src/app" and "e-mail" stay single tokens.
_TOKEN = re.compile(r"\w+(?:[.'_/-]\w+)*")


def is_utf8(text: str) -> bool:
    """Whether ``text`` can be stored as UTF-8 (a lone UTF-16 surrogate cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def content_hash(text: str) -> str:
    """Return the hex SHA-256 of ``text`` after a minimal, documented canonicalisation.

    Canonicalisation (and nothing else):

    1. Unicode NFC, so a composed "é" and "e" + combining accent hash the same;
    2. line endings CRLF / CR / U+2028 / U+2029 become ``\\n`` (transport artefacts);
    3. leading and trailing whitespace is stripped.

    Interior whitespace, case and punctuation are kept verbatim: "Hello  world" and
    "Hello world" are different content. The hash is of the UTF-8 encoding.
    """
    canonical = _NEWLINES.sub("\n", unicodedata.normalize("NFC", text)).strip()
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def match_tokens(text: str) -> list[str]:
    """Tokens of :func:`normalise_for_match` (lossy; for comparisons only)."""
    folded = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).casefold()
    # Drop accents: NFKD splits base letters from combining marks, which are then removed.
    decomposed = unicodedata.normalize("NFKD", folded)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _TOKEN.findall(unicodedata.normalize("NFC", stripped))


def normalise_for_match(text: str) -> str:
    """Lossy form for comparing texts: NFKC, case-folded, accents removed, punctuation dropped.

    Punctuation is removed except inside tokens (``v1.2.3``, ``don't``, ``user_id``,
    ``src/app.py``, ``e-mail``); whitespace is collapsed to single spaces. Two texts that
    differ only in case, accents, spacing or sentence punctuation normalise identically.
    Never store this form: it is a comparison key.
    """
    return " ".join(match_tokens(text))


_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)


def strip_code_blocks(text: str) -> str:
    """Replace fenced code blocks (```...```, also unterminated) with a newline."""
    return _CODE_FENCE.sub("\n", text)


# Abbreviations after which a period does not end a sentence (case-insensitive).
_ABBREVIATIONS = frozenset(
    {
        "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "cf",
        "approx", "no", "inc", "ltd", "co", "corp", "dept", "est", "fig", "jan", "feb", "mar",
        "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "mt", "ft", "u.s",
        "u.k", "a.m", "p.m",
    }
)  # fmt: skip
# Candidate boundary: sentence punctuation (plus closing quotes/brackets) followed by space.
_BOUNDARY = re.compile(r"([.!?…]+[\"'”’)\]]*)\s+")
_LAST_WORD = re.compile(r"(\S+)$")


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences with a regex heuristic (deterministic, no model).

    Boundaries are line breaks and ``. ! ? …`` followed by whitespace, except a period after
    a known abbreviation ("Dr.", "e.g.", "approx.", "U.S.") or a single-letter initial
    ("J. Smith"). The next sentence may start in lower case (chat style: "lol. i went").
    Bullet markers at the start of a line are removed. Empty pieces are dropped.
    """
    sentences: list[str] = []
    for line in _NEWLINES.sub("\n", text).split("\n"):
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", line).strip()
        if not line:
            continue
        start = 0
        for match in _BOUNDARY.finditer(line):
            end = match.end(1)
            word_match = _LAST_WORD.search(line[start : match.start(1)])
            word = word_match.group(1).casefold().strip("\"'“‘([") if word_match else ""
            if match.group(1).startswith(".") and (
                word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())
            ):
                continue
            piece = line[start:end].strip()
            if piece:
                sentences.append(piece)
            start = match.end()
        piece = line[start:].strip()
        if piece:
            sentences.append(piece)
    return sentences


def embedding_input(text: str, speaker: str | None, *, with_speaker: bool = True) -> str:
    """The text handed to the embedding model for a memory: ``"<speaker>: <text>"`` when the
    memory has a speaker (and ``with_speaker``), else the text itself."""
    name = " ".join((speaker or "").split())
    return f"{name}: {text}" if with_speaker and name else text
