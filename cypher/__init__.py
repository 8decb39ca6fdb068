"""Every Cypher statement of Mnemograph, one named ``.cypher`` file each, loaded by name.

Names are paths relative to this folder without the suffix, e.g. ``load("spaces/create")``
reads ``cypher/spaces/create.cypher``. Statements take user values only as parameters.
A block several statements share is written once, as a fragment under ``fragments/`` (not a
statement: it is neither listed nor loadable), and a statement includes it with a line of its
own, ``@include fragments/<name>``, replaced at load time by the fragment's lines at the
line's indentation (unexpanded, the line is not Cypher, so it can never be dropped quietly).
Files under ``browser/`` are the saved queries of the Neo4j Browser guide (pipelines.browser
renders them into it); nothing else runs them.
Statements that only tests or benchmarks run live with them (``tests/cypher``,
``benchmarks/cypher``) in a :class:`Library` of their own, so this package cannot load them.
"""

from __future__ import annotations

import threading
from pathlib import Path

ROOT = Path(__file__).parent
#: The folder of the shared blocks statements include, and the line that includes one.
FRAGMENTS = "fragments"
INCLUDE = "@include "


class UnknownStatement(KeyError):
    """Raised when no ``.cypher`` file has the requested name."""


class Library:
    """The named statements under one folder (read once, then cached)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._texts: dict[str, str] = {}
        self._lock = threading.Lock()

    def load(self, name: str) -> str:
        """Return the text of the statement ``name`` with its fragments included and without
        its ``//`` comment lines."""
        text = self._texts.get(name)
        if text is None:
            if name.split("/", 1)[0] == FRAGMENTS:
                raise UnknownStatement(f"{name!r} is a fragment, not a statement")
            lines = self._lines(name)
            text = "\n".join(ln for ln in lines if not ln.startswith("//")).strip()
            with self._lock:
                self._texts[name] = text
        return text

    def _lines(self, name: str) -> list[str]:
        """The lines of the file ``name``, each ``@include`` line replaced by the fragment's
        lines but its comments, indented like it (a fragment includes none)."""
        path = (self.root / f"{name}.cypher").resolve()
        if self.root not in path.parents or not path.is_file():
            raise UnknownStatement(f"no Cypher statement named {name!r} under {self.root}")
        out: list[str] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            body = line.lstrip()
            if not body.startswith(INCLUDE):
                out.append(line)
                continue
            fragment = body.removeprefix(INCLUDE).strip()
            if name.startswith(FRAGMENTS + "/") or not fragment.startswith(FRAGMENTS + "/"):
                raise UnknownStatement(f"{name!r} includes {fragment!r}: not a fragment")
            indent = line[: len(line) - len(body)]
            shared = [ln for ln in self._lines(fragment) if not ln.startswith("//")]
            out.extend(indent + ln if ln else ln for ln in shared)
        return out

    def names(self) -> list[str]:
        """All statement names, sorted (fragments are not statements)."""
        found = (str(p.relative_to(self.root).with_suffix("")) for p in self.root.rglob("*.cypher"))
        return sorted(n for n in found if n.split("/", 1)[0] != FRAGMENTS)


LIBRARY = Library(ROOT)


def load(name: str) -> str:
    """The production statement ``name`` (see :meth:`Library.load`)."""
    return LIBRARY.load(name)


def names() -> list[str]:
    """All production statement names, sorted."""
    return LIBRARY.names()
