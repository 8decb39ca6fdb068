"""Every Cypher statement of Mnemograph, one named ``.cypher`` file each, loaded by name.

Names are paths relative to this folder without the suffix, e.g. ``load("spaces/create")``
reads ``cypher/spaces/create.cypher``. Statements take user values only as parameters.
Files under ``browser/`` are the saved queries of the Neo4j Browser guide (pipelines.browser
renders them into it); nothing else runs them.
Statements that only tests or benchmarks run live with them (``tests/cypher``,
``benchmarks/cypher``) in a :class:`Library` of their own, so this package cannot load them.
"""

from __future__ import annotations

import threading
from pathlib import Path

ROOT = Path(__file__).parent


class UnknownStatement(KeyError):
    """Raised when no ``.cypher`` file has the requested name."""


class Library:
    """The named statements under one folder (read once, then cached)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._texts: dict[str, str] = {}
        self._lock = threading.Lock()

    def load(self, name: str) -> str:
        """Return the text of the statement ``name`` without its ``//`` comment lines."""
        text = self._texts.get(name)
        if text is None:
            path = (self.root / f"{name}.cypher").resolve()
            if self.root not in path.parents or not path.is_file():
                raise UnknownStatement(f"no Cypher statement named {name!r} under {self.root}")
            lines = path.read_text(encoding="utf-8").splitlines()
            text = "\n".join(ln for ln in lines if not ln.startswith("//")).strip()
            with self._lock:
                self._texts[name] = text
        return text

    def names(self) -> list[str]:
        """All statement names, sorted."""
        return sorted(
            str(p.relative_to(self.root).with_suffix("")) for p in self.root.rglob("*.cypher")
        )


LIBRARY = Library(ROOT)


def load(name: str) -> str:
    """The production statement ``name`` (see :meth:`Library.load`)."""
    return LIBRARY.load(name)


def names() -> list[str]:
    """All production statement names, sorted."""
    return LIBRARY.names()
