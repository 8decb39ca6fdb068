"""Claims: single-valued statements a speaker makes about themselves, found by narrow rules.

The automatic supersession job only ever retires something when a *later* claim of the *same
speaker* about the *same attribute* has a *different value or polarity*. This module finds such
claims in text, deterministically and conservatively (false retirements are what users of
peer systems complain about most, so a claim is only extracted when a rule is sure):

* the clause starts with a first-person subject (``I``/``we``, ``my``/``our``); claims made
  with ``we`` only ever conflict with other ``we`` claims;
* questions, hedged, conditional, future and habitual-past clauses ("maybe", "if", "will",
  "used to", "when I was") and additive ones ("also", "too", "as well") are skipped;
* attributes: residence ("I live in X", "I moved to X"), employer ("I work at/for X", "I
  started working at X", "I got a job at X"), occupation ("I work as a X"), age ("I'm 30 years
  old", "I just turned 31"), relationship status ("I'm married", "I got engaged"), attitudes
  ("I like/love/hate X", "I'm a big fan of X", with negation) and possessive attributes
  ("my favourite colour is X", "my phone number is X", "my boss is X") from an allow-list of
  single-valued nouns;
* places, employers and people must be proper names (capitalised in the original text), so
  "I moved to a bigger flat" or "my boss is great" never count.

Values are compared with :func:`same_value` (normalised, token containment counts as equal:
"Berlin" = "Berlin, Germany").
"""

from __future__ import annotations

from dataclasses import dataclass

from pipelines.ingest.facts import split_clauses
from pipelines.ingest.text import match_tokens, split_sentences, strip_code_blocks
from pipelines.language import current

__all__ = [
    "Claim",
    "candidate_pattern",
    "claim_coverage",
    "content_words",
    "extract_claims",
    "might_claim",
    "same_value",
]


@dataclass(frozen=True, slots=True)
class Claim:
    attribute: str
    """``"<subject>:<attribute>"``, e.g. ``"i:residence"``, ``"i:favourite colour"``,
    ``"we:employer"``, ``"i:attitude:sushi"``."""
    value: str
    """Normalised value ("" for attitudes, whose polarity is the value)."""
    positive: bool
    update: bool
    """The clause says the value changed ("moved to", "now", "anymore", "turned")."""
    rule: str
    clause: str
    display_value: str = ""
    """The value as written."""


_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'"})


_MAX_VALUE_WORDS = 6


def _normalise_clause(clause: str) -> str:
    text = " ".join(clause.translate(_APOSTROPHES).split())
    for rx, repl in current().claims.contractions:
        text = rx.sub(repl, text)
    previous = None
    while previous != text:
        previous = text
        text = current().claims.leading.sub("", text).strip()
    return text.rstrip(" .!;:,\"'")


def _cut_value(value: str) -> str:
    m = current().claims.value_cut.search(value)
    if m:
        value = value[: m.start()]
    return value.strip(" .!;:,\"'")


def _norm_value(value: str) -> str:
    tokens = match_tokens(value)
    while tokens and tokens[0] in current().claims.determiners:
        tokens = tokens[1:]
    return " ".join(tokens)


def _canonical_attr(attr: str) -> str:
    words = match_tokens(attr.replace("'s", " s"))
    spellings = current().claims.spellings
    words = [spellings.get(w, w) for w in words]
    return " ".join(words)


def _is_proper(value: str) -> bool:
    first = value.strip()[:1]
    return bool(first) and first.isupper()


def _claim(clause: str) -> Claim | None:
    text, rules = _normalise_clause(clause), current().claims
    if not text or text.endswith("?") or rules.skip.search(text) or rules.skip_cased.search(text):
        return None
    for rule, attribute, rx in rules.rules:
        m = rx.match(text)
        if not m:
            continue
        subject = "we" if m.group("subj").casefold() in ("we", "our") else "i"
        groups = m.groupdict()
        raw = _cut_value(m.group("value"))
        if not raw:
            return None
        words = raw.split()
        if len(words) > _MAX_VALUE_WORDS:
            return None
        positive = not groups.get("neg")
        update = bool(rules.update.search(clause)) or rule.endswith(("-move", "-start", "-turned"))
        if attribute == "possessive":
            attr = _canonical_attr(groups["attr"])
            head = attr.split()[-1] if attr else ""
            favourite = attr.startswith("favourite ")
            if head in rules.person_heads and not favourite:
                if not _is_proper(raw):
                    return None
            elif head not in rules.property_heads and not favourite:
                return None
            if words[0].casefold() in rules.bad_value_start and not favourite:
                return None
            value = _norm_value(raw)
            if not value:
                return None
            return Claim(f"{subject}:{attr}", value, positive, update, rule, clause, raw)
        if attribute == "attitude":
            obj = _norm_value(raw)
            tokens = obj.split()
            if not tokens or tokens[0] in rules.pronoun_objects:
                return None
            if not any(t not in current().lexicon.stop_words for t in tokens):
                return None
            verb = (groups.get("verb") or "like").casefold()
            liking = verb not in rules.disliking_verbs
            return Claim(
                f"{subject}:attitude:{obj}", "", liking == positive, update, rule, clause, raw
            )
        if attribute in rules.proper_value_attributes and not _is_proper(raw):
            return None
        if words[0].casefold() in rules.bad_value_start and attribute != "occupation":
            return None
        value = _norm_value(raw)
        if not value:
            return None
        return Claim(f"{subject}:{attribute}", value, positive, update, rule, clause, raw)
    return None


def candidate_pattern() -> str:
    """What the graph's prefilter matches (Java regex, whole string): a memory that may hold a
    claim, in the active language."""
    return current().claims.candidate_pattern


def might_claim(text: str) -> bool:
    """False when no rule can match ``text`` (a fast prefilter; True proves nothing)."""
    return bool(current().claims.candidate.search(text))


def extract_claims(text: str) -> list[Claim]:
    """Claims of ``text``, in text order, at most one per attribute (the last one wins)."""
    if not might_claim(text):
        return []
    out: dict[str, Claim] = {}
    for sentence in split_sentences(strip_code_blocks(text)):
        if sentence.rstrip().endswith("?"):
            continue
        for clause in split_clauses(sentence):
            claim = _claim(clause)
            if claim is not None:
                out.pop(claim.attribute, None)
                out[claim.attribute] = claim
    return list(out.values())


def same_value(a: Claim, b: Claim) -> bool:
    """Whether two claims about one attribute agree (same polarity, same or contained value)."""
    if a.positive != b.positive:
        return False
    if a.value == b.value:
        return True
    ta, tb = set(a.value.split()), set(b.value.split())
    return bool(ta and tb) and (ta <= tb or tb <= ta)


def content_words(text: str) -> set[str]:
    tokens = match_tokens(text)
    return {t for t in tokens if t not in current().lexicon.stop_words} or set(tokens)


def claim_coverage(text: str, claims: list[Claim]) -> float:
    """Share of ``text``'s content words that lie in its claims' clauses (0..1)."""
    words = content_words(text)
    if not words:
        return 0.0
    covered: set[str] = set()
    for c in claims:
        covered |= content_words(c.clause)
    return len(words & covered) / len(words)
