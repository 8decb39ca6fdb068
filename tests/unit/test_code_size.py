"""Size bars of the code a newcomer reads: no module over 500 lines, no function over 60 lines,
no function over 7 parameters, and context assembly in at most 15 modules. Checked for every
module under :data:`CHECKED` (``pipelines/`` and ``app/``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ("pipelines", "app")
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 7
MAX_ASSEMBLE_MODULES = 15


def _modules() -> Iterator[Path]:
    for path in CHECKED:
        yield from sorted((ROOT / path).rglob("*.py"))


def _functions(path: Path) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Parameters a caller passes (``self`` and ``cls`` not counted, ``*args`` and
    ``**kwargs`` one each)."""
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    count = len(names) + (args.vararg is not None) + (args.kwarg is not None)
    return count - (1 if names and names[0] in ("self", "cls") else 0)


def test_no_module_is_over_the_line_bar() -> None:
    long = {}
    for path in _modules():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            long[str(path.relative_to(ROOT))] = lines
    assert long == {}


def test_no_function_is_over_the_line_or_parameter_bar() -> None:
    over = []
    for path in _modules():
        rel = path.relative_to(ROOT)
        for node in _functions(path):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                over.append(f"{rel}:{node.lineno} {node.name}: {lines} lines")
            if _parameters(node) > MAX_PARAMETERS:
                over.append(f"{rel}:{node.lineno} {node.name}: {_parameters(node)} parameters")
    assert over == []


def test_context_assembly_is_at_most_fifteen_modules() -> None:
    modules = sorted(p.name for p in (ROOT / "pipelines/assemble").rglob("*.py"))
    assert len(modules) <= MAX_ASSEMBLE_MODULES, modules


def test_the_checks_see_what_they_count() -> None:
    """The counting itself: a function's lines include its signature and docstring, and its
    parameters leave out ``self``."""
    source = "class A:\n    def f(self, a, b=1, *c, d, **e):\n        '''doc'''\n        return a\n"
    (node,) = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)]
    assert _parameters(node) == 5
    assert (node.end_lineno or 0) - node.lineno + 1 == 3


def test_every_module_is_checked() -> None:
    checked = {p.relative_to(ROOT).as_posix() for p in _modules()}
    assert {
        "app/errors.py",
        "pipelines/consolidate/supersede.py",
        "pipelines/ingest/service.py",
        "pipelines/models/embeddings.py",
    } <= checked
