"""Domain-aware text condensers: shorten text to a token budget, keeping what matters.

A condenser is a pure function ``(text, budget_tokens, estimator) -> text``.
Contract, for every condenser in :data:`CONDENSERS` and every input:

* ``estimator.count(result) <= max(budget_tokens, 0)`` (the result may be ``""``);
* if the text already fits it is returned unchanged (fast path);
* the result only contains pieces of the input (whole units or a prefix of
  one) plus the elision marker :data:`ELISION` and separators.

Most condensers are *ranked extractive*: the text is split into units
(sentences, lines, code blocks), units are ranked by a content-specific notion
of importance, and units are taken greedily in rank order while they fit.  The
kept units are emitted in their original order, with :data:`ELISION` wherever
something was skipped, so the reader sees that material is missing.  Greedy
admission uses an additive upper bound (unit tokens + one separator/marker), and
the assembled text is then re-counted; if a non-additive estimator disagrees,
the least important kept units are dropped until it fits.  When no unit fits,
the condenser falls back to :func:`truncate`, which always fits.

:func:`text_condenser_for` picks one by the shape of the text.  The registry of every
condenser, data blocks included, is :mod:`pipelines.prompt.condensers`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from pipelines.language import current
from pipelines.prompt.tokens import TokenEstimator

__all__ = [
    "ELISION",
    "TEXT_CONDENSERS",
    "Condenser",
    "condense_assistant_message",
    "condense_code_signatures",
    "condense_entity_triples",
    "condense_timeline",
    "condense_user_message",
    "text_condenser_for",
    "truncate",
]

Condenser = Callable[[str, int, TokenEstimator], str]

ELISION = "[…]"

# --------------------------------------------------------------------------- truncate


def _longest_fitting_prefix(
    text: str, budget: int, estimator: TokenEstimator, render: Callable[[str], str]
) -> int:
    """Largest ``n`` (by binary search) with ``count(render(text[:n])) <= budget``.

    ``n = 0`` is accepted without counting when ``render("")`` is empty.  Only
    lengths whose rendering was verified are ever returned, so the answer is
    correct even for an estimator that is not monotone in prefix length (it is
    then merely not maximal).
    """
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimator.count(render(text[:mid])) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _marked(prefix: str, separator: str) -> str:
    kept = prefix.rstrip()
    return f"{kept}{separator}{ELISION}" if kept else ""


def truncate(text: str, budget: int, estimator: TokenEstimator) -> str:
    """Keep the longest prefix that fits, cut at a line or word boundary.

    Algorithm: binary-search the longest prefix that fits together with a
    trailing ``" […]"``; then move the cut back to the last newline (or, failing
    that, the last blank) if that keeps at least half of the prefix.  If even
    the marker does not fit, the longest bare prefix is returned.  The result
    always fits the budget (``""`` in the worst case).
    """
    if budget <= 0:
        return ""
    if estimator.count(text) <= budget:
        return text

    def with_space_marker(prefix: str) -> str:
        return _marked(prefix, " ")

    n = _longest_fitting_prefix(text, budget, estimator, with_space_marker)
    if n == 0:
        bare = _longest_fitting_prefix(text, budget, estimator, lambda p: p)
        return text[:bare]
    prefix = text[:n]
    candidates = []
    newline = prefix.rfind("\n")
    if newline >= n // 2 and prefix[:newline].strip():
        candidates.append(_marked(prefix[:newline], "\n"))
    blank = max(prefix.rfind(" "), prefix.rfind("\t"))
    if blank >= n // 2 and prefix[:blank].strip():
        candidates.append(_marked(prefix[:blank], " "))
    for candidate in candidates:
        if estimator.count(candidate) <= budget:
            return candidate
    return with_space_marker(prefix)


# --------------------------------------------------------------------- ranked extraction


def _join_kept(units: Sequence[str], kept: Iterable[int], separator: str) -> str:
    """Kept units in original order, with :data:`ELISION` marking every gap."""
    order = sorted(kept)
    if not order:
        return ""
    pieces: list[str] = []
    if order[0] > 0:
        pieces.append(ELISION + separator)
    for position, index in enumerate(order):
        if position:
            consecutive = index == order[position - 1] + 1
            pieces.append(separator if consecutive else separator + ELISION + separator)
        pieces.append(units[index])
    if order[-1] < len(units) - 1:
        pieces.append(separator + ELISION)
    return "".join(pieces)


def _extract(
    units: Sequence[str],
    ranking: Sequence[int],
    budget: int,
    estimator: TokenEstimator,
    separator: str,
) -> str:
    """Greedy ranked extraction (see the module docstring); may return ``""``."""
    if budget <= 0 or not units:
        return ""
    connector_cost = estimator.count(separator + ELISION + separator)
    marker_cost = estimator.count(separator + ELISION)
    spent = marker_cost  # room for a trailing marker
    kept: list[int] = []
    for index in dict.fromkeys(ranking):
        cost = estimator.count(units[index]) + connector_cost
        if spent + cost <= budget:
            kept.append(index)
            spent += cost
        elif spent + cost <= budget + connector_cost + marker_cost:
            # Near miss: the bound is loose for small budgets, so count exactly.  Once
            # some unit is kept, inserting another adds at most the unit and one gap.
            exact = estimator.count(_join_kept(units, [*kept, index], separator))
            if exact <= budget:
                kept.append(index)
                spent = exact
    result = _join_kept(units, kept, separator)
    while kept and estimator.count(result) > budget:
        kept.pop()  # least important admitted unit
        result = _join_kept(units, kept, separator)
    return result


def _fit(candidate: str, text: str, budget: int, estimator: TokenEstimator) -> str:
    """``candidate`` if it is non-empty and fits, else a plain truncation of ``text``."""
    if candidate and estimator.count(candidate) <= budget:
        return candidate
    return truncate(text, budget, estimator)


# ----------------------------------------------------------------------- user message

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def _sentences(text: str) -> list[str]:
    sentences: list[str] = []
    for line in text.split("\n"):
        sentences.extend(part for part in _SENTENCE_END.split(line.strip()) if part)
    return sentences


def condense_user_message(text: str, budget: int, estimator: TokenEstimator) -> str:
    """Keep the intent of a user turn: the question(s), first and last sentences.

    Ranking: the last question, the first sentence, earlier questions (latest
    first), the last sentence, then the remaining sentences in order.
    """
    if estimator.count(text) <= budget:
        return text
    if budget <= 0:
        return ""
    sentences = _sentences(text)
    if len(sentences) <= 1:
        return truncate(text, budget, estimator)
    questions = [i for i, s in enumerate(sentences) if s.endswith("?")]
    ranking = [*questions[-1:], 0, *reversed(questions[:-1]), len(sentences) - 1]
    ranking += range(len(sentences))
    return _fit(_extract(sentences, ranking, budget, estimator, " "), text, budget, estimator)


# ------------------------------------------------------------------ assistant message

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)


def condense_assistant_message(text: str, budget: int, estimator: TokenEstimator) -> str:
    """Keep fenced code verbatim, compress prose to topic sentences.

    Units are fenced code blocks and prose sentences.  Ranking: code blocks (in
    order), then the first sentence of each prose paragraph, then the other
    sentences.  A code block larger than half the budget is first reduced to
    its signatures (fences kept); if still no unit fits but there is code, the
    whole text's signatures are kept instead.
    """
    if estimator.count(text) <= budget:
        return text
    if budget <= 0:
        return ""
    units: list[str] = []
    code: list[int] = []
    topics: list[int] = []
    rest: list[int] = []

    def add_prose(prose: str) -> None:
        for paragraph in re.split(r"\n[ \t]*\n", prose):
            for position, sentence in enumerate(_sentences(paragraph)):
                (topics if position == 0 else rest).append(len(units))
                units.append(sentence)

    cursor = 0
    for match in _FENCE.finditer(text):
        add_prose(text[cursor : match.start()])
        code.append(len(units))
        units.append(match.group(0).rstrip("\n"))
        cursor = match.end()
    add_prose(text[cursor:])
    if not units:
        return truncate(text, budget, estimator)
    for i in code:  # a block too big to keep whole is reduced to its signatures
        if estimator.count(units[i]) > budget // 2:
            units[i] = condense_code_signatures(units[i], budget // 2, estimator) or units[i]
    condensed = _extract(units, [*code, *topics, *rest], budget, estimator, "\n")
    if not condensed and code:
        condensed = condense_code_signatures(text, budget, estimator)
    return _fit(condensed, text, budget, estimator)


# --------------------------------------------------------------------- entity triples

_ARROW = re.compile(r"\s*(?:-+>|→|=>|⇒)\s*")
_PAREN_TRIPLE = re.compile(r"\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*,\s*([^,()]+?)\s*\)")


def _triple_ends(line: str) -> tuple[str, str] | None:
    """(subject, object) if ``line`` looks like an ``S -> P -> O`` style triple."""
    match = _PAREN_TRIPLE.search(line)
    if match:
        return match.group(1).lower(), match.group(3).lower()
    parts = [p for p in _ARROW.split(line.strip().lstrip("-*• ").strip()) if p]
    if len(parts) >= 3 or (len(parts) == 2 and len(_ARROW.findall(line)) >= 2):
        return parts[0].strip().lower(), parts[-1].strip().lower()
    if line.count("|") >= 2:
        cells = [c.strip() for c in line.strip().strip("|").split("|") if c.strip()]
        if len(cells) >= 3 and not set("".join(cells)) <= set("-: "):
            return cells[0].lower(), cells[-1].lower()
    return None


def condense_entity_triples(text: str, budget: int, estimator: TokenEstimator) -> str:
    """Keep relationship lines, most connected entities first; drop prose last.

    Each triple line is scored by how often its subject and object occur across
    all triples (the most connected entities carry the structure).  Ranking:
    triples by descending score then position, duplicate triples after unique
    ones, then non-triple (narrative) lines in order.
    """
    if estimator.count(text) <= budget:
        return text
    if budget <= 0:
        return ""
    lines = text.split("\n")
    ends = {i: e for i, line in enumerate(lines) if (e := _triple_ends(line)) is not None}
    if not ends:
        return truncate(text, budget, estimator)
    frequency = Counter(entity for pair in ends.values() for entity in pair)
    seen: set[str] = set()
    unique: list[int] = []
    duplicates: list[int] = []
    for i in ends:
        key = " ".join(lines[i].split()).lower()
        (duplicates if key in seen else unique).append(i)
        seen.add(key)
    unique.sort(key=lambda i: (-(frequency[ends[i][0]] + frequency[ends[i][1]]), i))
    prose = [i for i, line in enumerate(lines) if i not in ends and line.strip()]
    keep_lines = [*unique, *duplicates, *prose]
    return _fit(_extract(lines, keep_lines, budget, estimator, "\n"), text, budget, estimator)


# --------------------------------------------------------------------------- timeline

_ISO_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?)")
_OTHER_DATE = re.compile(
    r"\b\d{4}/\d{1,2}/\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{1,2}:\d{2}\b"
    r"|^\s*[-*]?\s*\[[^\]\n]{2,40}\]",
    re.IGNORECASE,
)


def _is_dated(line: str) -> bool:
    month_day = current().time.month_day
    return bool(_ISO_DATE.search(line) or _OTHER_DATE.search(line) or month_day.search(line))


def condense_timeline(text: str, budget: int, estimator: TokenEstimator) -> str:
    """Keep the first and the most recent dated lines, eliding the middle.

    Dated lines are ordered chronologically by their ISO date when every dated
    line has one, otherwise by position.  Ranking: the earliest event, the most
    recent event, then the other events from most recent backwards, then
    undated lines in order.
    """
    if estimator.count(text) <= budget:
        return text
    if budget <= 0:
        return ""
    lines = text.split("\n")
    dated = [i for i, line in enumerate(lines) if _is_dated(line)]
    if not dated:
        return truncate(text, budget, estimator)
    iso = {i: m.group(1).replace(" ", "T") for i in dated if (m := _ISO_DATE.search(lines[i]))}
    if len(iso) == len(dated):
        dated.sort(key=lambda i: (iso[i], i))
    dated_set = set(dated)
    undated = [i for i, line in enumerate(lines) if i not in dated_set and line.strip()]
    ranking = [dated[0], *reversed(dated[1:]), *undated]
    return _fit(_extract(lines, ranking, budget, estimator, "\n"), text, budget, estimator)


# -------------------------------------------------------------------- code signatures

_SIGNATURE = re.compile(
    r"^\s*(?:@\w[\w.]*|(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:def|class|function|func|fn"
    r"|interface|struct|enum|trait|impl|protocol|extension|module|namespace)\b"
    r"|(?:pub(?:\([a-z]+\))?\s+)+\w|(?:public|private|protected|internal|static|abstract|"
    r"override)\s+[\w<>\[\], ]+\(|(?:export\s+)?(?:const|let|var)\s+\w+\s*=\s*"
    r"(?:async\s*)?(?:\(|function\b)|type\s+\w+\s*=)"
)
_FENCE_LINE = re.compile(r"^[ \t]*(?:```|~~~)")
_IMPORT = re.compile(r"^\s*(?:import\s|from\s+\S+\s+import\s|use\s|require\(|#include\s|package\s)")


def condense_code_signatures(text: str, budget: int, estimator: TokenEstimator) -> str:
    """Keep the API surface: definitions first, then imports, then bodies.

    Ranking: signature lines (``def``, ``class``, ``function``, ``fn``,
    decorators, ...) and code-fence lines in order, then import lines, then the
    remaining non-blank lines in order.
    """
    if estimator.count(text) <= budget:
        return text
    if budget <= 0:
        return ""
    lines = text.split("\n")
    signatures = [
        i for i, line in enumerate(lines) if _SIGNATURE.match(line) or _FENCE_LINE.match(line)
    ]
    imports = [i for i, line in enumerate(lines) if _IMPORT.match(line)]
    if not signatures and not imports:
        return truncate(text, budget, estimator)
    rest = [i for i, line in enumerate(lines) if line.strip()]
    ranking = [*signatures, *imports, *rest]
    return _fit(_extract(lines, ranking, budget, estimator, "\n"), text, budget, estimator)


# ---------------------------------------------------------------------- memory blocks


# ------------------------------------------------------------------ choice

TEXT_CONDENSERS: dict[str, Condenser] = {
    "user_message": condense_user_message,
    "assistant_message": condense_assistant_message,
    "entity_triples": condense_entity_triples,
    "timeline": condense_timeline,
    "code_signatures": condense_code_signatures,
    "truncate": truncate,
}

_ROLE_PREFIX = re.compile(r"^\s*\[?(user|assistant)\]?\s*:", re.IGNORECASE | re.MULTILINE)
_INDENTED = re.compile(r"^(?: {4}|\t)\S", re.MULTILINE)


def text_condenser_for(text: str) -> str:
    """Name of the text condenser suited to ``text``'s shape (a key of
    :data:`TEXT_CONDENSERS`).

    Checks, first match wins: mostly code lines with definitions (``code_signatures``);
    fenced code or three indented lines (``assistant_message``); two or more arrows / triple
    lines (``entity_triples``); a ``user:``/``assistant:`` role prefix; at least two dated
    lines making up a third of the lines (``timeline``); otherwise prose (``user_message``).
    """
    lines = [line for line in text.split("\n") if line.strip()]
    signatures = sum(1 for line in lines if _SIGNATURE.match(line) or _IMPORT.match(line))
    if "```" not in text and signatures >= 2 and signatures * 4 >= len(lines):
        return "code_signatures"
    if "```" in text or "~~~" in text or len(_INDENTED.findall(text)) >= 3:
        return "assistant_message"
    triples = sum(1 for line in lines if _triple_ends(line) is not None)
    if len(_ARROW.findall(text)) >= 2 and triples >= 1:
        return "entity_triples"
    role = _ROLE_PREFIX.search(text)
    if role:
        return f"{role.group(1).lower()}_message"
    dated = sum(1 for line in lines if _is_dated(line))
    if dated >= 2 and dated * 3 >= len(lines):
        return "timeline"
    return "user_message"
