"""Migrations are idempotent, recorded in the graph, and guard the vector dimension."""

import pytest

import graph_schema


def test_migrations_recorded_and_idempotent(engine):
    report = graph_schema.apply(engine.store, engine.embedder.dimensions)
    assert report.applied == []  # the engine fixture already applied everything
    assert set(report.already) == {name for name, _, _ in graph_schema.migrations()}
    recorded = {r["name"] for r in engine.store.read("schema/migrations_applied")}
    assert recorded >= set(report.already)


def test_indexes_online(engine):
    states = {i["name"]: i for i in engine.store.read("schema/index_states")}
    for name in ("memory_embedding", "memory_text", "entity_name", "memory_key"):
        assert states[name]["state"] == "ONLINE"
    assert states["memory_embedding"]["dimensions"] == 384
    assert states["memory_embedding"]["type"] == "VECTOR"
    assert states["memory_text"]["type"] == "FULLTEXT"


def test_dimension_mismatch_refuses_to_start(engine):
    with pytest.raises(graph_schema.SchemaMismatch, match="384 dimensions"):
        graph_schema.apply(engine.store, 768)


def test_missing_vector_index_detected():
    with pytest.raises(graph_schema.SchemaMismatch, match="missing"):
        graph_schema.check_dimensions([], 384)
