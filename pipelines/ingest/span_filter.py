"""Which recognised name spans are names: edges trimmed, common words capitalised dropped.

spaCy's small English recogniser finds names by their shape, so a capitalised ordinary word
becomes PERSON, ORG or NORP: an interjection or greeting opening a turn ("Congrats",
"Nah", "Bye Caroline"), a common noun opening a sentence ("Guitar lessons…", "Blue is…"), a
lower-case fragment ("kinda nerve"). Its tagger does not help: it tags those words NNP too.
What does help is how the batch writes the word elsewhere (:class:`Casing`): a name is
capitalised wherever it stands, a common word is written in lower case except where a
sentence opens. For each span (:func:`refine_span`):

1. words at its edges that are discourse words (:data:`~pipelines.language.lexicon.
   DISCOURSE_WORDS`) or have no capital or digit are trimmed ("Bye Caroline" -> "Caroline");
   nothing left: no entity;
2. a one-word span is dropped when it is a weekday abbreviation, or written in lower case
   more often than capitalised inside a sentence across the batch ("Glad" beside "so glad"),
   or, unless tagged PERSON ("Mark", "Grace"), opens a sentence and is an ordinary word never
   capitalised inside one ("Integrates with Git": the dictionary is the lemmatizer's verbs);
   acronyms and the speakers' own names are always kept;
3. a longer span loses the ordinary words opening it when it opens a sentence or heading
   and they are never capitalised inside one ("Update Dockerfile" -> "Dockerfile"); inside a
   Title Case heading or bold label it loses its common words at both ends ("CSS Styling" ->
   "CSS"); it is dropped when every lettered word is a common word ("Scalene Triangle",
   "Triangle 1");
4. a span that starts inside a word ("300KB" -> "KB") or holds a comma list ("Skills,
   Projects") is no name.

Rule-based technical terms that are plain words are kept only when they are not ordinary
words (:func:`keep_term`: "`required`", "`type`", "`SELECT`" are not names; "`numpy`" is).
Markdown headings and bold labels (Title Case) are no evidence of capitalisation.

Bulk imports and benchmarks send whole conversations per batch, so the counts are those of a
conversation; a batch of one turn has only the word lists and its own casing to go by.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from pipelines.language import current
from pipelines.language.lexicon import in_dictionary

__all__ = ["Casing", "keep_term", "math_ranges", "opens_sentence", "refine_span"]

_WORD = re.compile(r"(?<![\w'’])[^\W_][\w'’.-]*(?<![.'’-])")
_SENTENCE_START = re.compile(r"(?:^|[.!?…:;\n\"“(*>-])[\s\"“'‘(*]*$")
_LOOKBEHIND = 4  # characters before a word that decide whether it opens a sentence
_POSSESSIVE = re.compile(r"['’]s?$")
_INLINE_CODE = re.compile(r"`([^`\n]{1,80})`")
_PLAIN_WORD = re.compile(r"[^\W\d_]+")
_MATH = re.compile(r"\\\((?:(?!\\\)).){0,400}?\\\)|\\\[.{0,2000}?\\\]|\$\$.{0,2000}?\$\$", re.S)
_LIST = re.compile(r",\s")
_BOLD = re.compile(r"\*\*[^*\n]{1,80}\*\*")
_TITLED = re.compile(r"^[ \t]*#{1,6}[ \t].*$|\*\*[^*\n]{1,80}\*\*", re.MULTILINE)


def opens_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens a sentence (text start, after . ! ? : ; a line
    break, a quote, a bracket or a list marker)."""
    return _SENTENCE_START.search(text, max(0, start - _LOOKBEHIND), start) is not None


def _fold(word: str) -> str:
    return _POSSESSIVE.sub("", word).casefold()


@dataclass
class Casing:
    """How a batch writes each word in prose (in lower case; capitalised inside a sentence)
    and how often it stands in inline code (between backticks)."""

    lower: Counter[str] = field(default_factory=Counter)
    inner_capital: Counter[str] = field(default_factory=Counter)
    coded: Counter[str] = field(default_factory=Counter)
    dictionary: frozenset[str] = frozenset()
    """The language's words (:func:`pipelines.language.lexicon.dictionary_words`)."""
    ordinary: frozenset[str] = frozenset()
    """Its verbs: no proper names among them (WordNet's nouns and adjectives have "Paris",
    "Caroline")."""

    @classmethod
    def of(
        cls,
        texts: Iterable[str],
        dictionary: frozenset[str] = frozenset(),
        ordinary: frozenset[str] = frozenset(),
    ) -> Casing:
        casing = cls(dictionary=dictionary, ordinary=ordinary)
        for text in texts:
            if "`" in text:
                for code in _INLINE_CODE.finditer(text):
                    casing.coded.update(_fold(w) for w in _WORD.findall(code.group(1)))
                text = _INLINE_CODE.sub(lambda c: " " * len(c.group(0)), text)
            if "#" in text or "**" in text:
                # Title Case headings and bold labels capitalise every word: no evidence.
                text = _TITLED.sub(lambda t: " " * len(t.group(0)), text)
            for m in _WORD.finditer(text):
                word = m.group(0)
                if word.islower():
                    casing.lower[_fold(word)] += 1
                elif word[:1].isupper() and not opens_sentence(text, m.start()):
                    casing.inner_capital[_fold(word)] += 1
        return casing

    def common(self, word: str) -> bool:
        """Written in lower case more often than capitalised inside a sentence."""
        folded = _fold(word)
        return self.lower[folded] > self.inner_capital[folded]

    def never_inner(self, word: str) -> bool:
        """Never capitalised inside a sentence, and an ordinary word (written in lower case
        elsewhere, or a verb of the dictionary): capitalised only where a sentence or heading
        opens ("Update", "Utilize", "Integrates")."""
        folded = _fold(word)
        if self.inner_capital[folded]:
            return False
        return self.lower[folded] >= 2 or in_dictionary(folded, self.ordinary)

    def prose_word(self, word: str) -> bool:
        """Written in lower case in prose more often than in inline code: an ordinary word
        ("`required`", "`username`"), not a code name ("`numpy`")."""
        folded = _fold(word)
        return self.lower[folded] > self.coded[folded]


def _edge_word(word: str) -> bool:
    folded = _fold(word)
    lexicon = current().lexicon
    if folded in lexicon.discourse_words or folded in lexicon.name_particles:
        return True
    return not any(c.isupper() or c.isdigit() for c in word)


def refine_span(
    text: str,
    start: int,
    end: int,
    casing: Casing,
    speakers: frozenset[str] = frozenset(),
    label: str = "",
) -> tuple[int, int] | None:
    """The part of the recognised span ``text[start:end]`` (NER ``label``) that is a name, or
    None (module docstring). ``speakers``: the batch's speaker names, case-folded."""
    if start > 0 and text[start - 1].isalnum():
        return None  # inside a word: "300KB", "ABC" -> "BC"
    if _LIST.search(text, start, end):
        return None  # a list of things, not one name: "Skills, Projects"
    words = [(start + m.start(), start + m.end()) for m in _WORD.finditer(text[start:end])]
    while words and _edge_word(text[words[0][0] : words[0][1]]):
        words.pop(0)
    while words and _edge_word(text[words[-1][0] : words[-1][1]]):
        words.pop()
    if not words:
        return None
    if len(words) > 1 and opens_sentence(text, words[0][0]):
        # a heading or sentence opened by ordinary words: "Update Dockerfile", "Inline CSS"
        while len(words) > 1 and casing.never_inner(text[words[0][0] : words[0][1]]):
            words.pop(0)
    if len(words) > 1 and _in_titled(text, words[0][0]):
        # a Title Case heading or bold label: its ordinary words are no part of a name
        # ("CSS Styling" -> "CSS", "Problem Setup" -> nothing)
        while words and casing.common(text[words[0][0] : words[0][1]]):
            words.pop(0)
        while words and casing.common(text[words[-1][0] : words[-1][1]]):
            words.pop()
        if not words:
            return None
    first, last = words[0][0], words[-1][1]
    surfaces = [text[a:b] for a, b in words]
    if len(surfaces) == 1:
        word = surfaces[0]
        folded = _fold(word)
        if folded in speakers or (len(word) > 1 and word.isupper()):
            return first, last
        if folded in current().lexicon.weekday_abbreviations or casing.common(word):
            return None
        # Verbs are names too ("Mark", "Rob", "Grace"): not for a PERSON.
        if label != "PERSON" and opens_sentence(text, first) and casing.never_inner(word):
            return None
        return first, last
    lettered = [w for w in surfaces if not w.replace(".", "").isdigit()]
    if all(_fold(w) not in speakers and not w.isupper() and casing.common(w) for w in lettered):
        return None  # "Scalene Triangle", "Triangle 1"
    return first, last


def _in_titled(text: str, at: int) -> bool:
    """Whether ``at`` lies in a Markdown heading line or a bold label."""
    line_start = text.rfind("\n", 0, at) + 1
    if text[line_start:at].lstrip(" \t").startswith("#"):
        return True
    return any(m.start() <= at < m.end() for m in _BOLD.finditer(text, max(0, at - 80), at + 80))


def keep_term(surface: str, casing: Casing) -> bool:
    """Whether a rule-based technical term is a name: a plain word in backticks that the
    batch writes as an ordinary word in prose is not ("`required`", "`SELECT`")."""
    if not _PLAIN_WORD.fullmatch(surface):
        return True
    if surface.islower():
        ordinary = (
            in_dictionary(surface, casing.dictionary) and not casing.inner_capital[_fold(surface)]
        )
        return not (ordinary or casing.prose_word(surface))
    if surface.isupper():
        return not (casing.common(surface) or in_dictionary(surface, casing.dictionary))
    return True


def math_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of LaTeX math (``\\( … \\)``, ``\\[ … \\]``, ``$$ … $$``): its
    letters are variables and vertices ("ABC", "m_a"), never names."""
    if "\\" not in text and "$$" not in text:
        return []
    return [m.span() for m in _MATH.finditer(text)]
