"""Every Cypher statement of Mnemograph, one named ``.cypher`` file each, loaded by name.

Names are paths relative to this folder without the suffix, e.g. ``load("spaces/create")``
reads ``cypher/spaces/create.cypher``. Statements take user values only as parameters.
Files under ``browser/`` are saved exploration queries for Neo4j Browser, not used by code.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

ROOT = Path(__file__).parent


class UnknownStatement(KeyError):
    """Raised when no ``.cypher`` file has the requested name."""


@cache
def load(name: str) -> str:
    """Return the text of the statement ``name`` (cached after the first read)."""
    path = (ROOT / f"{name}.cypher").resolve()
    if ROOT.resolve() not in path.parents or not path.is_file():
        raise UnknownStatement(f"no Cypher statement named {name!r} under {ROOT}")
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if not ln.startswith("//")]
    return "\n".join(lines).strip()


def names() -> list[str]:
    """All statement names, sorted."""
    return sorted(str(p.relative_to(ROOT).with_suffix("")) for p in ROOT.rglob("*.cypher"))
