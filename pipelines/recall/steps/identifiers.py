"""Steps ``identifiers`` and ``exact_first``: a query's identifier-like tokens (codes, ids,
hashes, paths, versions) are looked up exactly, and a memory holding one verbatim is
returned first.

Why a step of its own: an identifier such as "SCALEMARK000007" is one full-text term among a
space of look-alikes; the full-text signal does rank its memory first, but fusion gives that
no more than one RRF rank, and the rescoring steps after it (the reranker's blend with the
vector score, late interaction, MMR) weigh meaning, where every "SCALEMARK0000xx" memory is
the same. ``identifiers`` adds the exact matches to the pool (the full-text index finds them
by phrase, the text is checked for the identifier itself); ``exact_first`` puts them at the
head of the results after every reordering step (among themselves in the order those steps
gave them).

The rule (pure, deterministic: :func:`find_identifiers`): a query token is an identifier
when it is (edge punctuation stripped):

* **letters mixed with digits**, at least 4 characters ("SCALEMARK000007", "XQ-7734-ALPHA",
  "gpt4o", "claude-opus-4-7"), unless it is a number with a unit or ordinal suffix ("1990s",
  "5pm", "3rd", "10km"): those are prose;
* **hexadecimal of at least 7 characters with a digit** ("a3f9c2e", "1234567"): short commit
  hashes, ticket numbers (all-letter hex such as "defaced" is a word);
* a **path** with a letter: rooted ("/etc/hosts", "./run.sh", "~/notes"), with two
  separators ("src/app/main"), or ending in a file name with an extension ("docs/api.md");
  "and/or" and "24/7" are prose;
* a **dotted version** ("1.2.3", "v2.4", "python3.11": digits with at least two dots, or a
  ``v`` before dotted digits);
* a **snake_case**, **camelCase** (two lower-case letters first: "iPhone" is a name) or
  **file.ext**-style identifier ("user_id", "getUserById", "main.py"), or a kebab-case one
  with a digit ("kafka-3"); plain kebab words ("mother-in-law") and counted compounds
  ("30-day", "5-star") are prose.

Dates ("2023-05-08") are time expressions, not identifiers. A memory matches an identifier
when its text contains it case-insensitively as a whole token (not inside a longer run of
letters and digits: "SCALEMARK0000420" does not match "SCALEMARK000042").
"""

from __future__ import annotations

import re
from typing import Literal

from pipelines import spaces
from pipelines.recall.config import DEFAULT_RECALL_CONFIG, SIGNAL_FULLTEXT
from pipelines.recall.query import scope_fulltext_query
from pipelines.recall.state import Explanations, RecallState
from pipelines.recall.steps.base import RecallStep, StepContext
from pipelines.recall.steps.candidate_query import filter_params, merge, parse_candidates
from pipelines.recall.time_expressions import date_pattern


class Identifiers(RecallStep):
    kind: Literal["identifiers"] = "identifiers"
    requires = ("understand",)
    after = ("candidates",)

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return bool(state.plan.identifiers) and state.plan.weights[SIGNAL_FULLTEXT] > 0.0

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        idents = state.plan.identifiers
        tag = spaces.fulltext_tag(ctx.space)
        rows = ctx.store.read(
            "recall/identifier_candidates",
            space=ctx.space,
            **filter_params(state.request),
            identifiers=[
                {"lucene": scope_fulltext_query(identifier_phrase(i), tag), "needle": i.lower()}
                for i in idents
            ],
            fetch=ctx.config.candidates.identifier_fetch,
            k=ctx.config.candidates.identifier_fetch,
        )
        exact: dict[str, list[str]] = {}
        kept = []
        for r in rows:
            found = [
                idents[i] for i in r["matched"] if contains_identifier(r["text"] or "", idents[i])
            ]
            if found:
                exact[r["id"]] = found
                kept.append(r)
        merge(state.pool, parse_candidates(kept))
        state.exact = exact
        if not state.explaining:
            return None
        return {i: {"exact_identifier": found} for i, found in exact.items()}


class ExactFirst(RecallStep):
    """The memories holding a query identifier verbatim head the results (among themselves:
    the results' order, then the ranking's for those selection left out); the others follow
    in their order, ``k`` at most."""

    kind: Literal["exact_first"] = "exact_first"
    requires = ("identifiers",)
    after = ("select", "replies", "standing_slots")

    def applies(self, state: RecallState, ctx: StepContext) -> bool:
        return bool(state.exact)

    def run(self, state: RecallState, ctx: StepContext) -> Explanations | None:
        chosen = state.final_ids()
        # the results' own order first (selection's), then the ranking's for the others
        picked = {item_id: n for n, item_id in enumerate(chosen)}
        ranked = {item_id: n for n, item_id in enumerate(state.order)}
        far = len(ranked)

        def place(item_id: str) -> tuple[int, int, str]:
            if item_id in picked:
                return (0, picked[item_id], item_id)
            return (1, ranked.get(item_id, far), item_id)

        exact = sorted(state.exact, key=place)[: state.plan.k]
        rest = [i for i in chosen if i not in state.exact]
        state.results = (exact + rest)[: state.plan.k]
        return None


#: A query token: anything between whitespace, minus edge punctuation.
_EDGE = ".,;:!?'\"“”‘’()[]{}<>«»`*"
_UNIT_OR_ORDINAL = re.compile(
    r"\d+(?:st|nd|rd|th|s|am|pm|k|m|km|kg|g|mg|ml|l|lb|lbs|mi|ft|in|cm|mm|h|hr|hrs|min|mins|"
    r"sec|secs|x|d|yo|mph|gb|mb|tb|kb)",
    re.IGNORECASE,
)
_HEX = re.compile(r"[0-9a-fA-F]{7,}")
_PATH = re.compile(r"(?:~|\.{1,2})?[/\\]?[\w.\-]+(?:[/\\][\w.\-]+)+|[/\\][\w.\-]+")
_VERSION = re.compile(r"(?:[A-Za-z]*\d+(?:\.\d+){2,}|v\d+(?:\.\d+)+)", re.IGNORECASE)
_COUNT_COMPOUND = re.compile(r"\d+(?:-[A-Za-z]+)+")  # "30-day", "5-star": prose
_DOTTED_DATE = re.compile(r"\d{1,2}[./]\d{1,2}[./]\d{2,4}")
_SNAKE = re.compile(r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+")
_CAMEL = re.compile(r"[a-z]{2,}[A-Z][A-Za-z0-9]*")
_FILE_EXT = re.compile(r"[\w\-]+\.(?:py|js|ts|tsx|jsx|go|rs|java|c|h|cpp|hpp|rb|php|sh|md|json|"
                       r"yaml|yml|toml|ini|cfg|txt|csv|sql|html|css|xml|lock|log|conf)",
                       re.IGNORECASE)  # fmt: skip
_KEBAB = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+")


def _strip(raw: str) -> str:
    token = raw.strip(_EDGE)
    if len(token) > 2 and token[-2:].lower() in {"'s", "’s"}:
        token = token[:-2]
    return token


def is_identifier(token: str) -> bool:
    """Whether one (stripped) token is identifier-like (module docstring)."""
    if len(token) < 3 or date_pattern().fullmatch(token) or _DOTTED_DATE.fullmatch(token):
        return False
    if _COUNT_COMPOUND.fullmatch(token):
        return False
    has_digit = any(ch.isdigit() for ch in token)
    has_letter = any(ch.isalpha() for ch in token)
    if _PATH.fullmatch(token) and has_letter and _is_path(token):
        return True
    if _VERSION.fullmatch(token) or _SNAKE.fullmatch(token) or _CAMEL.fullmatch(token):
        return True
    if _FILE_EXT.fullmatch(token):
        return True
    if has_digit and _HEX.fullmatch(token):
        return True
    if has_digit and has_letter and len(token) >= 4:
        return _UNIT_OR_ORDINAL.fullmatch(token) is None
    return bool(has_digit and _KEBAB.fullmatch(token) and has_letter)


def _is_path(token: str) -> bool:
    """A path-shaped token that is no prose slash ("and/or", "24/7"): it starts at a root
    ("/", "./", "~/"), has two separators, or ends in a file name with an extension."""
    parts = re.split(r"[/\\]", token)
    rooted = token[:1] in "/\\" or token.startswith(("./", "../", "~/"))
    return rooted or len(parts) >= 3 or "." in parts[-1].strip(".")


def find_identifiers(
    query: str, limit: int = DEFAULT_RECALL_CONFIG.query.max_identifiers
) -> list[str]:
    """The identifier-like tokens of ``query`` as written, in order, de-duplicated
    case-insensitively, at most ``limit`` (each costs a full-text lookup)."""
    found: list[str] = []
    seen: set[str] = set()
    for raw in query.split():
        token = _strip(raw)
        if token and is_identifier(token) and token.casefold() not in seen:
            seen.add(token.casefold())
            found.append(token)
    return found[:limit]


def contains_identifier(text: str, identifier: str) -> bool:
    """Whether ``text`` holds ``identifier`` case-insensitively as a whole token: the
    characters either side of the match are not letters or digits."""
    pattern = re.compile(rf"(?<![^\W_]){re.escape(identifier)}(?![^\W_])", re.IGNORECASE)
    return pattern.search(text) is not None


def identifier_phrase(identifier: str) -> str:
    """A Lucene phrase clause for ``identifier``: the analyzer splits it into the same tokens
    as the indexed text, the phrase keeps their order. Only ``"`` and ``\\`` have a meaning
    inside a phrase; both are escaped (lower case: no operator survives)."""
    inner = identifier.lower().replace("\\", "\\\\").replace('"', '\\"')
    return f'"{inner}"'
