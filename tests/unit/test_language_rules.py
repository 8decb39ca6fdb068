"""Every language rule lives in ``pipelines/language/``: a regular expression that spells out
words, or a literal set of four or more words, anywhere else in ``pipelines/`` fails this test
unless :data:`NOT_LANGUAGE` says why it is not a language rule (identifier shapes, labels).
With the rules off (``configure("off")``) every rule set is empty and matches nothing."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pipelines import language
from pipelines.language.base import NEVER

ROOT = Path(__file__).resolve().parents[2]
PIPELINES = ROOT / "pipelines"

#: A word inside a pattern, once escapes, flags, group names and character classes are gone.
_WORD = re.compile(r"[a-z]{3,}", re.IGNORECASE)
_NOT_WORDS = re.compile(
    r"\\[a-zA-Z]|\(\?[a-zA-Z]+\)|\(\?P?<\w+>|\(\?-i:|\[[^\]]*\]|\{[^}]*\}|\(\?P=\w+\)"
)
_MIN_WORDS = 4  # a literal collection of this many words is a word list

#: (file, where) → why it is not a language rule. ``where`` is the assigned name, or the
#: enclosing function's name for a rule inside a function.
NOT_LANGUAGE: dict[tuple[str, str], str] = {
    ("pipelines/assemble/service.py", "ESSENTIAL_STEPS"): "step names",
    ("pipelines/browser.py", "_HEADER"): "the Browser guide's own header keys",
    ("pipelines/consolidate/decay.py", "STAGES"): "consolidation stage names",
    ("pipelines/ingest/entities.py", "_URL"): "URL and e-mail shapes",
    ("pipelines/ingest/standing_parse.py", "_subordinate"): "dependency labels",
    ("pipelines/prompt/blocks.py", "_ENTITY_LIKE"): "XML character entities",
    ("pipelines/prompt/blocks.py", "_ESCAPES"): "XML character entities",
    ("pipelines/prompt/text_condensers.py", "_SIGNATURE"): "programming-language keywords",
    ("pipelines/prompt/text_condensers.py", "_IMPORT"): "programming-language keywords",
    ("pipelines/recall/steps/identifiers.py", "_UNIT_OR_ORDINAL"): "units after a number",
    ("pipelines/recall/steps/identifiers.py", "_FILE_EXT"): "file extensions",
}


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _pattern_words(node: ast.AST) -> list[str]:
    text = "".join(_strings(node))
    return _WORD.findall(_NOT_WORDS.sub(" ", text))


def _is_word_list(node: ast.AST) -> bool:
    if not isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        return False
    words = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return len(words) >= _MIN_WORDS and all(
        w.replace("'", "").replace(" ", "").isalpha() and w.islower() for w in words
    )


def _findings(path: Path) -> list[tuple[str, str, int]]:
    rel = str(path.relative_to(ROOT))
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for child in ast.walk(node):
                where.setdefault(id(child), node.name)
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for target in targets:
            if isinstance(target, ast.Name):
                for child in ast.walk(node):
                    where[id(child)] = target.id
    skip = {  # names, labels and type arguments, not words: __all__, Literal[...]
        id(child)
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript)
        or (
            isinstance(node, ast.Assign)
            and any(getattr(t, "id", "") == "__all__" for t in node.targets)
        )
        for child in ast.walk(node)
    }
    found: list[tuple[str, str, int]] = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        is_regex = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.func.attr
            in {"compile", "search", "match", "fullmatch", "sub", "split", "findall", "finditer"}
            and node.args
            and _pattern_words(node.args[0])
        )
        if is_regex or _is_word_list(node):
            found.append((rel, where.get(id(node), "<module>"), getattr(node, "lineno", 0)))
    return found


def _all_findings() -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    for path in sorted(PIPELINES.rglob("*.py")):
        if "language" in path.relative_to(PIPELINES).parts[:1]:
            continue
        out.extend(_findings(path))
    return out


def test_no_language_rule_outside_the_language_package() -> None:
    stray = [
        f"{rel}:{line} ({name})"
        for rel, name, line in _all_findings()
        if (rel, name) not in NOT_LANGUAGE
    ]
    assert stray == [], "language rules outside pipelines/language/:\n" + "\n".join(stray)


def test_the_allow_list_holds_no_stale_entry() -> None:
    found = {(rel, name) for rel, name, _ in _all_findings()}
    assert set(NOT_LANGUAGE) <= found, set(NOT_LANGUAGE) - found


def test_the_scan_finds_a_word_pattern_and_a_word_list() -> None:
    code = (
        'import re\nX = re.compile(r"\\b(?:hello|goodbye)\\b")\n'
        'Y = {"one", "two", "three", "four"}\n'
    )
    path = PIPELINES / "_language_scan_probe.py"
    path.write_text(code, encoding="utf-8")
    try:
        assert [name for _, name, _ in _findings(path)] == ["X", "Y"]
    finally:
        path.unlink()


def test_with_the_rules_off_every_rule_set_is_empty() -> None:
    off = language.OFF
    for concept in ("queries", "intents", "time", "names", "lexicon", "talk", "standing", "facts"):
        rules = getattr(off, concept)
        for name, value in vars(rules).items() if hasattr(rules, "__dict__") else []:
            assert value in ((), frozenset(), {}, NEVER, "(?!)"), (concept, name)
    assert off.queries.meta.search("throughout our conversations") is None
    assert language.ENGLISH.queries.stop_words


def test_configure_switches_every_consumer_and_names_a_bad_value() -> None:
    from pipelines.recall.intent import Intent, classify_intent

    try:
        assert language.configure("off") is language.OFF
        assert classify_intent("Why did I move to Boston?").intent is Intent.SEMANTIC
        language.configure("english")
        assert classify_intent("Why did I move to Boston?").intent is Intent.CAUSAL
        with pytest.raises(ValueError, match="english, off"):
            language.configure("klingon")  # type: ignore[arg-type]
    finally:
        language.configure("english")
