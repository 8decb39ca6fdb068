"""Query understanding without models: cleaning, keywords, Lucene, speakers.

* :func:`clean_query` — normalise whitespace/control characters and enforce the length cap
  (:func:`searchable_text` without the checks).
* :func:`extract_keywords` — rule-based keyword extraction (question words and fillers
  stripped; quoted strings, dates, capitalised words and words of length ≥ 4 kept).
* :func:`build_fulltext_query` — a syntactically safe Lucene query string for the Neo4j
  full-text index (every special character escaped, operators neutralised).
* :func:`find_speakers` — which known speakers/people a query mentions.

Time expressions are resolved by :mod:`pipelines.recall.time_expressions`.

Everything here is pure and deterministic: same input, same output.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

from pipelines.language import current
from pipelines.recall.config import DEFAULT_RECALL_CONFIG
from pipelines.recall.config.sections import MAX_PHRASE_BOOST, MIN_PHRASE_BOOST
from pipelines.recall.speakers import speaker_forms
from pipelines.recall.time_expressions import date_pattern, month_names

# ---------------------------------------------------------------------------------------
# Vocabulary


_QUOTED_RE = re.compile(r'"([^"]*)"|“([^”]*)”')
_WORD_RE = re.compile(r"[^\W_]+(?:[-'’.][^\W_]+)*")
_POSSESSIVE_RE = re.compile(r"['’]s?$", re.IGNORECASE)


def searchable_text(text: str) -> str:
    """``text`` with control/format characters replaced by spaces and whitespace collapsed
    (empty when nothing searchable is left, e.g. a query of control characters only)."""
    printable = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in text)
    return " ".join(printable.split())


def clean_query(text: str, max_chars: int) -> str:
    """Replace control/format characters by spaces, collapse whitespace, enforce the cap.

    Raises:
        ValueError: if nothing is left or the cleaned text exceeds ``max_chars``.
    """
    cleaned = searchable_text(text)
    if not cleaned:
        raise ValueError("query is empty")
    if len(cleaned) > max_chars:
        raise ValueError(f"query is longer than {max_chars} characters")
    return cleaned


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _strip_possessive(word: str) -> str:
    if len(word) > 2 and word[-2:].lower() in {"'s", "’s"}:
        return word[:-2]
    return word.rstrip("'’")


def _is_noise(word: str) -> bool:
    lower = word.casefold()
    rules = current().queries
    return lower in rules.stop_words or (word.islower() and lower in rules.time_words)


def extract_keywords(
    query: str, min_chars: int = DEFAULT_RECALL_CONFIG.query.keyword_min_chars
) -> list[str]:
    """Keywords of ``query`` in order of first appearance, de-duplicated case-insensitively.

    Kept, as written: quoted strings (``"..."`` or curly quotes) as one keyword, date
    expressions ("8 May 2023", "2023-05-08", "May 2023", "2022") as one keyword, then every
    remaining word that is not a stop word / question word / filler (nor a lower-case
    relative-time word) and that contains a digit, starts with a capital letter (likely a
    proper noun) or has at least ``min_chars`` characters; a capitalised month name is kept unless
    it opens the query ("May I ..."). Possessive ``'s`` is removed.
    """
    found: list[tuple[int, str]] = []
    quoted = list(_QUOTED_RE.finditer(query))
    for match in quoted:
        inner = " ".join((match.group(1) or match.group(2) or "").split())
        if inner:
            found.append((match.start(), inner))
    rest = _mask(query, (m.span() for m in quoted))
    dates = list(date_pattern().finditer(rest))
    found.extend((m.start(), " ".join(m.group(0).split())) for m in dates)
    rest = _mask(rest, (m.span() for m in dates))
    for match in _WORD_RE.finditer(rest):
        word = _strip_possessive(match.group(0))
        if word.casefold() in month_names() and word[0].isupper() and match.start() > 0:
            found.append((match.start(), word))  # "in May": a date, although "may" is a stop word
            continue
        if not word or _is_noise(word):
            continue
        if any(ch.isdigit() for ch in word) or word[0].isupper() or len(word) >= min_chars:
            found.append((match.start(), word))
    found.sort(key=lambda pair: pair[0])
    seen: set[str] = set()
    keywords: list[str] = []
    for _, word in found:
        key = word.casefold()
        if key not in seen:
            seen.add(key)
            keywords.append(word)
    return keywords


# ---------------------------------------------------------------------------------------
# Lucene

#: Characters with a meaning in Lucene's classic query syntax (``&&``/``||`` are covered
#: by escaping ``&`` and ``|`` individually).
LUCENE_SPECIAL_CHARS: frozenset[str] = frozenset('\\+-!():^[]"{}~*?|&/')
_EDGE_PUNCTUATION = ".,;:!?'\"“”‘’()[]{}<>«»`"


_TRAILING = " \t\r\n\"'“”‘’)]}»"


def first_person(text: str) -> bool:
    """Whether ``text`` speaks of its asker in the first person ("When does my sprint
    end?") and not of what the other party said ("What did you recommend for my
    sprint?"): an agent asks on behalf of its user, whose own turns say what they did."""
    rules = current().queries
    return rules.first_person.search(text) is not None and rules.asks_assistant.search(text) is None


def task_request(text: str) -> bool:
    """Whether ``text`` asks for help with a task ("How should I organise my resume?", "Can
    you show me how to add login?") rather than about what was said or done ("What did I
    decide?", "Have I used Flask before?")."""
    rules = current().queries
    return rules.task.search(text) is not None and rules.past_record.search(text) is None


def ends_with_question(text: str) -> bool:
    """Whether ``text`` ends by asking a question ("Wow, great! What did you paint?"), closing
    quotes and brackets aside. A turn that only asks in passing ("Did I tell you? I got the
    job.") does not."""
    return text.rstrip(_TRAILING).endswith(("?", "？"))


def escape_lucene(term: str) -> str:
    """Backslash-escape every Lucene special character in ``term``."""
    return "".join("\\" + ch if ch in LUCENE_SPECIAL_CHARS else ch for ch in term)


def _lucene_token(raw: str) -> str | None:
    token = "".join(ch for ch in raw if ch.isprintable() and not ch.isspace())
    token = _strip_possessive(token.strip(_EDGE_PUNCTUATION)).strip(_EDGE_PUNCTUATION)
    if not any(ch.isalnum() for ch in token):
        return None
    # Lower case neutralises the AND/OR/NOT/TO operators (they only exist in upper case).
    return escape_lucene(token.lower())


def build_fulltext_query(
    text: str,
    max_terms: int = DEFAULT_RECALL_CONFIG.query.fulltext_max_terms,
    phrase_boost: float = DEFAULT_RECALL_CONFIG.query.fulltext_phrase_boost,
) -> str | None:
    """A safe Lucene query: boosted quoted phrases and single terms joined with ``OR``.

    Quoted strings of two or more words become phrase clauses ``"w1 w2"^boost``; the other
    words become single-term clauses, minus stop words and lower-case relative-time words
    (a capitalised month name that does not open the text is kept: "in May").
    Every term is lower-cased (so ``AND``/``OR``/``NOT``/``TO`` lose their operator
    meaning) and every Lucene special character in it is backslash-escaped; the only
    unescaped syntax in the output is the phrase quotes, the boosts and the ``OR``
    separators. Clauses are de-duplicated and capped at ``max_terms``. Returns ``None``
    when nothing searchable is left.
    """
    if max_terms <= 0:
        raise ValueError("max_terms must be positive")
    if not MIN_PHRASE_BOOST <= phrase_boost <= MAX_PHRASE_BOOST:
        raise ValueError(f"phrase_boost must be in [{MIN_PHRASE_BOOST}, {MAX_PHRASE_BOOST}]")
    # Fixed-point, never exponent notation: "1e-05" would smuggle in an unescaped "-".
    boost = f"{phrase_boost:.3f}".rstrip("0").rstrip(".")
    clauses: list[str] = []
    quoted = list(_QUOTED_RE.finditer(text))
    for match in quoted:
        words = [_lucene_token(raw) for raw in (match.group(1) or match.group(2) or "").split()]
        kept = [word for word in words if word]
        if len(kept) >= 2:
            clauses.append(f'"{" ".join(kept)}"^{boost}')
        elif kept:
            clauses.append(kept[0])
    for position, raw in enumerate(_mask(text, (m.span() for m in quoted)).split()):
        stripped = _strip_possessive(raw.strip(_EDGE_PUNCTUATION))
        is_month = position > 0 and stripped[:1].isupper() and stripped.casefold() in month_names()
        if not stripped or (_is_noise(stripped) and not is_month):
            continue
        token = _lucene_token(raw)
        if token and (len(stripped) > 1 or stripped.isdigit()):
            clauses.append(token)
    unique = list(dict.fromkeys(clauses))[:max_terms]
    return " OR ".join(unique) if unique else None


def scope_fulltext_query(query: str, space_tag: str, field: str = "text") -> str:
    """Restrict a :func:`build_fulltext_query` query to one space inside Lucene.

    The space clause is required but boosted to zero, so it filters without adding to the
    score (scores stay comparable to an unscoped query's); the query's clauses search only
    ``field`` (``text`` for memories, ``texts`` for session documents). ``space_tag`` is
    :func:`pipelines.spaces.fulltext_tag` (letters and digits only: nothing to escape,
    checked here anyway).
    """
    if not space_tag.isalnum():
        raise ValueError("space_tag must be letters and digits only")
    if not field.isidentifier():
        raise ValueError("field must be an identifier")
    return f"+space_tag:{space_tag}^0 +{field}:({query})"


# ---------------------------------------------------------------------------------------
# Speakers


def _speaker_spans(
    query: str, known_speakers: Iterable[str], forms: Mapping[str, str] | None = None
) -> list[tuple[int, int, str]]:
    """``(start, end, speaker)`` of every mention of a known speaker, in query order, by any
    of its ``forms`` (form → speaker; default :func:`pipelines.recall.speakers.speaker_forms`
    of ``known_speakers``; pass the forms of all the space's speakers, so that an alias is
    only one where it names one of them)."""
    wanted = {" ".join(name.split()) for name in known_speakers if name.strip()}
    forms = {
        form: " ".join(name.split())
        for form, name in (speaker_forms(wanted) if forms is None else forms).items()
        if " ".join(name.split()) in wanted
    }
    taken: list[tuple[int, int, str]] = []
    for form in sorted(forms, key=lambda f: (-len(f), f)):
        body = r"\s+".join(re.escape(part) for part in form.split())
        # an alias followed by a capitalised word is someone else's name ("Jon Arryn")
        other = "" if form == forms[form].casefold() else r"(?!\s+(?-i:[A-Z]))"
        pattern = re.compile(rf"(?<![\w]){body}(?:['’]s?)?(?![\w]){other}", re.IGNORECASE)
        for match in pattern.finditer(query):
            start, end = match.span()
            if any(start < t_end and t_start < end for t_start, t_end, _ in taken):
                continue
            taken.append((start, end, forms[form]))
    return sorted(taken)


def find_speakers(
    query: str, known_speakers: Iterable[str], forms: Mapping[str, str] | None = None
) -> list[str]:
    """Known speakers mentioned in ``query``, in order of first mention.

    Matching is case-insensitive on whole words, tolerates any whitespace inside
    multi-word names and possessives ("Caroline's", "James'"). Longer names win over
    names they contain ("Jon Snow" over "Jon" at the same place). A speaker exported under a
    full name or a handle is also found by its given name ("Jon" for "Jon Snow" or
    "jon_snow42") when no other speaker has that name. Returned names use the spelling of
    ``known_speakers``; blank names are ignored.
    """
    spans = _speaker_spans(query, known_speakers, forms)
    return list(dict.fromkeys(name for _, _, name in spans))


def strip_meta(query: str) -> str:
    """``query`` without the words that ask *for* something rather than *about* it ("Can you
    give me a summary of …", "… throughout our conversations", "the order in which I
    brought up the different aspects of …"): a summary or ordering request is about its topic,
    and the request's own words only pull the search toward turns that happen to share them.
    Returns the query unchanged when nothing searchable would be left."""
    stripped = " ".join(current().queries.meta.sub(" ", query).split())
    stripped = re.sub(r"\s+([?.!,;:])", r"\1", stripped).strip(" ,;:")
    return stripped if build_fulltext_query(stripped) is not None else query


def strip_speakers(
    query: str, known_speakers: Iterable[str], forms: Mapping[str, str] | None = None
) -> str:
    """``query`` without its mentions of known speakers (possessives included), tidied.

    A memory's own speaker is a property, not part of its text ("I researched adoption
    agencies" is Caroline's turn), so a name in the question matches only the turns that
    *address* that person ("Wow, Caroline!"). Searching the content without the name, and
    boosting the named speaker's turns instead, avoids that trap. Returns the query
    unchanged when nothing searchable (no word but stop words) would be left.
    """
    spans = _speaker_spans(query, known_speakers, forms)
    if not spans:
        return query
    stripped = " ".join(_mask(query, ((start, end) for start, end, _ in spans)).split())
    stripped = re.sub(r"\s+([?.!,;:])", r"\1", stripped)
    return stripped if build_fulltext_query(stripped) is not None else query
