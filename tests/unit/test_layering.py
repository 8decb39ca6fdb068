"""Layers run one way: ``app -> pipelines -> {cypher, graph_schema}``, and inside
``pipelines`` only the package edges listed in :data:`ALLOWED` exist.

Imports are read from the source (``ast``): module level, inside functions and under
``TYPE_CHECKING`` alike, since each is a dependency. A unit of ``pipelines`` is one of its
top-level modules (``pipelines/spaces.py``) or packages (``pipelines/recall/``).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("app", "pipelines", "graph_schema", "cypher", "mnemograph")
PROJECT = (*PACKAGES, "neo4j_runtime", "benchmarks", "tests")

#: Which top-level package may import which (besides itself).
LAYERS: dict[str, frozenset[str]] = {
    # neo4j_runtime: `mnemograph neo4j ...`; mnemograph: the SDK, for the CLI and MCP over stdio
    "app": frozenset({"pipelines", "neo4j_runtime", "mnemograph"}),
    "mnemograph": frozenset(),  # the SDK stands alone: httpx and pydantic only
    "pipelines": frozenset({"cypher", "graph_schema"}),
    "graph_schema": frozenset({"cypher"}),
    "cypher": frozenset(),
}

#: The only imports allowed between units of ``pipelines``: unit -> the units it may use.
#: Foundations (errors, graph_faults, graph_warmup, tracing, graph, models, overrides) use
#: nothing above them; the services build on spaces and the engine; assembly reads through
#: recall and builds what it may build on demand (a missing schema or projection) only
#: through ``maintenance``.
ALLOWED: dict[str, frozenset[str]] = {
    "errors": frozenset(),
    "fields": frozenset(),  # field types of the request models
    "graph_faults": frozenset(),  # the breaker and retry loop under graph
    "graph_warmup": frozenset(),  # the plans graph has the breaker prepare after a restart
    "tracing": frozenset(),  # optional spans (statements, steps, jobs): OpenTelemetry only
    "graph": frozenset({"graph_faults", "graph_warmup", "tracing"}),
    "access_log": frozenset({"graph"}),  # access statistics written behind the read path
    "models": frozenset(),
    "language": frozenset(),  # every language rule: word lists, phrasings, patterns
    "prompt": frozenset({"language"}),  # prompt text: blocks, condensers, the decomposer (no I/O)
    "overrides": frozenset({"errors"}),
    "spaces": frozenset({"graph", "errors"}),
    "session_documents": frozenset({"spaces", "graph"}),
    "schema_data": frozenset({"session_documents", "spaces", "graph"}),
    "browse": frozenset({"session_documents", "spaces", "graph", "errors"}),
    "browser": frozenset({"graph"}),  # the Browser guide and where Neo4j serves Browser
    "engine": frozenset({"schema_data", "access_log", "graph", "models"}),
    "ingest": frozenset(
        {
            "engine",
            "session_documents",
            "spaces",
            "graph",
            "models",
            "overrides",
            "errors",
            "fields",
            "language",
        }
    ),
    "recall": frozenset(
        {
            "ingest",
            "engine",
            "access_log",
            "spaces",
            "graph",
            "models",
            "overrides",
            "errors",
            "fields",
            "tracing",
            "language",
        }
    ),
    "consolidate": frozenset(
        {
            "recall",
            "ingest",
            "engine",
            "session_documents",
            "spaces",
            "graph",
            "models",
            "overrides",
            "errors",
            "fields",
            "tracing",
            "language",
        }
    ),
    "maintenance": frozenset({"consolidate", "engine", "spaces", "graph", "errors"}),
    "assemble": frozenset(
        {
            "recall",
            "maintenance",
            "prompt",
            "ingest",  # its pure text helpers (sentences of a compact record)
            "engine",
            "spaces",
            "graph",
            "models",
            "overrides",
            "errors",
            "fields",
            "tracing",
        }
    ),
    "space_settings": frozenset({"assemble", "consolidate", "ingest", "overrides", "errors"}),
    # transfer: a space record's settings are checked as a new space's
    "transfer": frozenset({"space_settings", "ingest", "spaces", "graph", "models", "errors"}),
}

#: Edges that exist on this branch only until the assembler's rework lands (it routes its
#: on-demand builds through ``maintenance``): remove at merge.
PENDING: frozenset[tuple[str, str]] = frozenset({("assemble", "consolidate")})

#: Modules that may still import project code inside a function until that rework lands.
PENDING_HIDDEN: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Import:
    source: str  # path relative to the repository, e.g. "pipelines/ingest/service.py"
    line: int
    target: str  # the imported project module, e.g. "pipelines.spaces"
    in_function: bool

    def __str__(self) -> str:
        where = " (inside a function)" if self.in_function else ""
        return f"{self.source}:{self.line} imports {self.target}{where}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = _resolve(node, module, is_package)
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        yield sub if _is_module(sub) else base


def _imports(path: Path) -> Iterator[Import]:
    module = _module_name(path)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

    def visit(node: ast.AST, in_function: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                for target in _targets(child, module, is_package):
                    if target.split(".")[0] in PROJECT:
                        rel = str(path.relative_to(ROOT))
                        yield Import(rel, child.lineno, target, in_function)
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            yield from visit(child, inner)

    yield from visit(tree, False)


def project_imports(packages: tuple[str, ...] = PACKAGES) -> list[Import]:
    return [imp for pkg in packages for path in sorted((ROOT / pkg).rglob("*.py"))
            for imp in _imports(path)]  # fmt: skip


def unit(module_or_path: str) -> str:
    """``pipelines.recall.service`` / ``pipelines/recall/service.py`` -> ``recall``."""
    parts = module_or_path.removesuffix(".py").replace("/", ".").split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_violations(imports: list[Import]) -> list[str]:
    bad = []
    for imp in imports:
        src, dst = imp.source.split("/")[0], imp.target.split(".")[0]
        if src != dst and dst not in LAYERS.get(src, frozenset()):
            bad.append(f"{imp}: {src} may not import {dst}")
    return bad


def unit_violations(imports: list[Import]) -> list[str]:
    bad = []
    for imp in imports:
        if not (imp.source.startswith("pipelines/") and imp.target.startswith("pipelines.")):
            continue
        src, dst = unit(imp.source), unit(imp.target)
        if src == dst or dst in ALLOWED.get(src, frozenset()) or (src, dst) in PENDING:
            continue
        bad.append(f"{imp}: pipelines.{src} -> pipelines.{dst} is not an allowed edge")
    return bad


def test_layers_run_one_way() -> None:
    assert layer_violations(project_imports()) == []


def test_only_the_listed_edges_join_pipelines_packages() -> None:
    assert unit_violations(project_imports(("pipelines",))) == []


def test_every_pipelines_unit_is_listed() -> None:
    units = {unit(str(p.relative_to(ROOT))) for p in (ROOT / "pipelines").iterdir()
             if p.suffix == ".py" or (p / "__init__.py").is_file()}  # fmt: skip
    units -= {"__init__"}
    assert units - set(ALLOWED) == set()


def test_the_allowed_edges_have_no_cycle() -> None:
    """The list is a layering: following allowed edges never leads back."""
    state: dict[str, int] = defaultdict(int)  # 0 new, 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(ALLOWED.get(node, frozenset())):
            assert state[nxt] != 1, f"cycle: {' -> '.join([*path, nxt])}"
            if state[nxt] == 0:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(ALLOWED):
        if state[start] == 0:
            visit(start, [start])


def test_no_project_import_hides_in_a_function() -> None:
    """A dependency is declared at the top of the module, where a reader (and this test) sees
    it; third-party imports may stay lazy (heavy or optional libraries)."""
    hidden = [
        str(imp)
        for imp in project_imports(("app", "pipelines", "graph_schema"))
        if imp.in_function and imp.source not in PENDING_HIDDEN
    ]
    assert hidden == []


def test_no_import_cycle_between_modules() -> None:
    """Module by module (not only package by package), imports form no loop."""
    graph: dict[str, set[str]] = defaultdict(set)
    for imp in project_imports():
        graph[_module_name(ROOT / imp.source)].add(imp.target)
    state: dict[str, int] = defaultdict(int)
    cycles: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state[nxt] == 1:
                cycles.append(" -> ".join([*path[path.index(nxt) :], nxt]))
            elif state[nxt] == 0:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(graph):
        if state[start] == 0:
            visit(start, [start])
    assert cycles == []


#: Inside the ``mnemograph`` package: the adapters sit on the SDK, which knows nothing of them.
SDK_ALLOWED: dict[str, frozenset[str]] = {
    "mnemograph.client": frozenset({"mnemograph.client", "mnemograph.schema"}),
    "mnemograph.integrations": frozenset({"mnemograph.integrations", "mnemograph.client"}),
}


def sdk_violations(imports: list[Import]) -> list[str]:
    bad = []
    for imp in imports:
        src = _module_name(ROOT / imp.source)
        for part, allowed in SDK_ALLOWED.items():
            if (src == part or src.startswith(part + ".")) and not any(
                imp.target == a or imp.target.startswith(a + ".") for a in allowed
            ):
                bad.append(f"{imp}: {part} may use only {sorted(allowed)}")
    return bad


def test_the_adapters_sit_on_the_sdk_only() -> None:
    assert sdk_violations(project_imports(("mnemograph",))) == []
    back = [Import("mnemograph/client/sync.py", 1, "mnemograph.integrations.langchain", False)]
    assert len(sdk_violations(back)) == 1


def test_the_checker_sees_a_back_edge(tmp_path: Path) -> None:
    """The checks above catch what they claim to: a lower layer importing a higher one, a
    pipelines edge not listed, an import hidden in a function."""
    imports = [
        Import("graph_schema/__init__.py", 1, "pipelines.spaces", False),
        Import("pipelines/graph.py", 1, "app.services", True),
        Import("pipelines/ingest/service.py", 1, "pipelines.recall.config", False),
        Import("pipelines/spaces.py", 1, "pipelines.consolidate.runner", True),
    ]
    assert len(layer_violations(imports)) == 2
    assert len(unit_violations(imports)) == 2
