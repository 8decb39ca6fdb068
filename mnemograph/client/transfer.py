"""Export/import helpers shared by the clients and the CLI."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from mnemograph.client.models import ImportResult, TransferCounts


def merge_results(results: Iterable[ImportResult]) -> ImportResult:
    nodes: Counter[str] = Counter()
    rels: Counter[str] = Counter()
    for r in results:
        nodes.update(r.nodes)
        rels.update(r.relationships)
    return ImportResult(nodes=dict(nodes), relationships=dict(rels))


def counts_record(records: Iterable[dict[str, Any]]) -> TransferCounts | None:
    """The ``counts`` record an export ends with, if ``records`` hold one."""
    for record in records:
        if record.get("type") == "counts":
            return TransferCounts(nodes=record["nodes"], relationships=record["relationships"])
    return None


def mismatches(expected: TransferCounts, actual: TransferCounts) -> list[str]:
    """Where the server's counts after an import differ from the export's."""
    out = []
    for kind, want, got in (
        ("nodes", expected.nodes, actual.nodes),
        ("relationships", expected.relationships, actual.relationships),
    ):
        for name in sorted(set(want) | set(got)):
            if want.get(name, 0) != got.get(name, 0):
                out.append(f"{kind}.{name}: export {want.get(name, 0)}, server {got.get(name, 0)}")
    return out
