"""The GDS memory budget's rule (pipelines.consolidate.graph_budget): Neo4j's size settings
read as bytes, and the budget as the least of the share and the heap less the headroom."""

from __future__ import annotations

import pytest

from pipelines.consolidate.graph_budget import derive, parse_bytes

GIB, MIB = 2**30, 2**20


def test_sizes_read_as_neo4j_writes_and_accepts_them() -> None:
    assert parse_bytes("2.00GiB") == 2 * GIB  # as dbms.listConfig reports it
    assert parse_bytes("2g") == parse_bytes("2G") == parse_bytes("2048m") == 2 * GIB
    assert parse_bytes("512MiB") == 512 * MIB
    assert parse_bytes("1.50GiB") == 1.5 * GIB
    assert parse_bytes("1048576") == parse_bytes("1024k") == MIB
    for bad in ("", "two gigs", "2 x", "-1g"):
        with pytest.raises(ValueError, match="not a size"):
            parse_bytes(bad)


def test_the_budget_is_the_share_capped_by_the_headroom() -> None:
    assert derive(2 * GIB, 0.5, 512) == GIB  # the share binds
    assert derive(1 * GIB, 0.5, 768) == 256 * MIB  # the headroom binds
    assert derive(16 * GIB, 0.5, 512) == 8 * GIB
    assert derive(512 * MIB, 0.5, 768) == 0.0  # a heap below the headroom: no graphs at all
    assert derive(2 * GIB, 1.0, 0) == 2 * GIB
