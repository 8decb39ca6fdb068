"""Grammar checks of standing-statement candidates, on spaCy's tags and dependency parse.

The regex pass of :mod:`pipelines.ingest.standing` finds *candidates* by their opening words;
these checks decide, from the sentence's grammar, whether a candidate is a rule for the future
about how the speaker wants things done:

* **instruction**: the body after the rule words ("always", "never", "don't", "make sure to",
  "from now on") is parsed with "You should" put in front (the small model often tags a
  subject-less imperative as a noun phrase; a modal forces the verb reading) and with "I" in
  front (to see its tense). It must read as a base-form verb, not past or ongoing, with an object
  or complement ("you should use semicolons in JS", "… answer in French"): "never had a chance"
  (past), "always here to help" (no verb), "don't give up" / "never say never" (nothing to do)
  fail. Verbs of feeling or encouragement ("worry",
  "let", "quit", "be afraid") and advice about the listener ("don't limit yourself", "don't let
  anything stop you", "… your dreams" with no first person) are not requests;
* **preference**: the verb of preferring ("prefer", "'d rather", "my preference is") or a
  first-person present habit with an object ("I always use tabs") must have "I"/"we" as subject,
  be present tense, have an object, and not sit under "like", "if", "when" ("like I prefer");
  the statement is the verb's clause without the clauses coordinated after it ("…, and I've
  already implemented …"); an object that is only a pronoun ("I prefer its simplicity") takes the
  sentence's main clause with it, or the statement is dropped;
* **condition**: an adverbial clause under "when", "whenever", "if" or "while" names what the
  rule applies to: its prepositional object or direct object ("… when I ask about deadlines" ->
  "deadlines", "… when discussing new endpoints" -> "new endpoints").
"""

from __future__ import annotations

from typing import Any

from pipelines.language import current

__all__ = ["condition_of", "instruction_holds", "preference_span"]

Doc = Any  # spaCy Doc / Token / Span: spaCy ships no type information
_PRESENT = frozenset({"VB", "VBP"})
_PAST_OR_ONGOING = frozenset({"VBD", "VBN", "VBG"})
_NOT_VERBS = frozenset({"JJ", "JJR", "JJS", "RB", "DT", "IN"})
_TRAILING = frozenset({",", ".", ";", ":", "!", "?", "-", "–", "—", "…"})
_SUBJECTS = frozenset({"nsubj", "nsubjpass", "expl"})


def _root(doc: Doc) -> Doc:
    return next(t for t in doc if t.dep_ == "ROOT")


def _has_complement(verb: Doc) -> bool:
    for c in verb.children:
        if c.dep_ in current().standing.complements:
            return True
        if c.dep_ == "advmod" and c.lower_ not in current().standing.empty_adverbs:
            return True
    return False


def _about_listener(tokens: Any) -> bool:
    """Advice about the listener's own life: "yourself", "you" as an object, or "your" in a
    clause that does not mention the speaker."""
    words = [t for t in tokens]
    first = any(t.lower_ in current().standing.first_person for t in words)
    for t in words:
        low = t.lower_
        if low in ("yourself", "yourselves"):
            return True
        if low == "you" and t.dep_ not in _SUBJECTS:
            return True
        if low in ("your", "yours") and not first:
            return True
    return False


def _not_a_rule_verb(verb: Doc) -> bool:
    lemma = verb.lemma_.lower()
    particles = {c.lower_ for c in verb.children if c.dep_ == "prt"}
    if any((lemma, p) in current().standing.not_rule_phrasals for p in particles):
        return True
    if lemma in current().standing.object_rule_verbs:
        return not any(c.dep_ in ("dobj", "dative") for c in verb.children)
    if lemma == "be":
        return any(
            c.dep_ in ("acomp", "attr") and c.lower_ in current().standing.feeling_adjectives
            for c in verb.children
        )
    return lemma in current().standing.not_rule_verbs


def instruction_holds(should_doc: Doc, i_doc: Doc) -> bool:
    """``should_doc`` parses "You should " + the candidate's body, ``i_doc`` "I " + the body
    (module docstring)."""
    root = _root(should_doc)
    between = (
        should_doc[len(current().standing.should) : root.i]
        if root.i >= len(current().standing.should)
        else None
    )
    if between is None or any(t.pos_ not in ("ADV", "PART") for t in between):
        return False  # the body does not open with its verb ("always here to help")
    if root.tag_ != "VB" or i_doc[1 + len(between)].tag_ in _PAST_OR_ONGOING | _NOT_VERBS:
        return False  # "never had …" is narration; "always good to hear" has no verb
    if _not_a_rule_verb(root) or not _has_complement(root):
        return False
    return not _about_listener(t for t in should_doc if t.i >= len(current().standing.should))


def is_standing_marked(sentence: str) -> bool:
    """Whether the sentence has a word that makes a request standing (lexicon)."""
    low = sentence.casefold()
    words = {w.strip(".,;:!?\"'") for w in low.split()}
    return bool(words & current().standing.standing_markers) or any(
        p in low for p in current().standing.standing_phrases
    )


def _preference_head(doc: Doc) -> Doc | None:
    for t in doc:
        subject = [c for c in t.children if c.dep_ == "nsubj"]
        first = bool(subject) and subject[0].lower_ in ("i", "we")
        if t.lemma_.lower() in current().standing.prefer_verbs and t.pos_ == "VERB":
            if first and t.tag_ in _PRESENT:
                return t
        elif t.lower_ == "rather" and t.head.pos_ in ("VERB", "AUX"):
            head = t.head
            hs = [c for c in head.children if c.dep_ == "nsubj"]
            if hs and hs[0].lower_ in ("i", "we"):
                return head
        elif t.lower_ == "preference" and any(c.lower_ in ("my", "our") for c in t.children):
            if t.head.lemma_ == "be":
                return t.head
        elif first and t.tag_ == "VBP" and t.pos_ == "VERB":
            habit = any(c.lower_ in current().standing.habit_adverbs for c in t.children)
            obj = any(c.dep_ == "dobj" for c in t.children)
            if habit and obj and t.lemma_.lower() not in current().standing.mental_verbs:
                return t
    return None


def _subordinate(head: Doc) -> bool:
    if head.dep_ in ("relcl", "acl", "pcomp", "pobj"):
        return True
    return any(
        c.dep_ in ("mark", "advmod")
        and c.lower_ in current().standing.subordinators - current().standing.reason_markers
        for c in head.children
    )


def _cut_children(head: Doc) -> list[Doc]:
    """Children whose subtrees end the statement: coordinated or loosely attached clauses."""
    out = []
    for c in head.children:
        if c.i < head.i:
            continue
        if (
            (c.dep_ in ("conj", "parataxis") and c.pos_ in ("VERB", "AUX"))
            or (
                c.dep_ == "advcl"
                and any(
                    m.dep_ == "mark" and m.lower_ in current().standing.clause_breakers
                    for m in c.children
                )
            )
            or (c.dep_ == "cc" and c.i + 1 < len(head.doc) and head.doc[c.i + 1].dep_ == "nsubj")
        ):
            out.append(c)
    return out


def preference_span(doc: Doc) -> tuple[int, int] | None:
    """Character span, in the parsed sentence, of its preference (module docstring), or None."""
    head = _preference_head(doc)
    if head is None or _subordinate(head) or not _has_complement(head):
        return None
    subtree = list(head.subtree)
    subject = [c for c in head.children if c.dep_ == "nsubj"]
    start_tok = subject[0].left_edge if subject else subtree[0]
    stop = min([c.left_edge.i for c in _cut_children(head)] + [subtree[-1].i + 1])
    tokens = [t for t in subtree if start_tok.i <= t.i < stop]
    if not tokens or _about_listener(tokens):
        return None
    objects = [c for c in head.children if c.dep_ in ("dobj", "xcomp", "attr") and c.i > head.i]
    if objects and _anaphoric(objects[0]):
        if head.dep_ == "ROOT" and start_tok.i == 0:
            return None  # the antecedent is in another sentence
        start_tok = doc[0]
    end = tokens[-1]
    while end.i > start_tok.i and (end.text in _TRAILING or end.dep_ == "cc"):
        end = doc[end.i - 1]
    return start_tok.idx, end.idx + len(end.text)


def _anaphoric(obj: Doc) -> bool:
    if obj.lower_ in current().standing.anaphora:
        return True
    return any(c.dep_ == "poss" and c.lower_ in current().standing.anaphora for c in obj.children)


def condition_of(doc: Doc) -> str | None:
    """The topic a rule applies to (module docstring), or None."""
    for t in doc:
        if t.dep_ != "advcl":
            continue
        if not any(
            c.lower_ in current().standing.condition_markers for c in t.children if c.i < t.i
        ):
            continue
        topic = _topic(t)
        if topic is not None:
            return topic
    return None


def _topic(verb: Doc) -> str | None:
    for c in verb.children:
        if c.dep_ == "prep" and c.i > verb.i:
            words = [t for t in c.subtree if t.i > c.i]
        elif c.dep_ in ("dobj", "pcomp") and c.i > verb.i:
            words = list(c.subtree)
        else:
            continue
        text = "".join(t.text_with_ws for t in words).strip(" .,;:!?")
        if len(text) >= 3 and text.lower() not in current().standing.anaphora:
            return text
    return None
