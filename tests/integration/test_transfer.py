"""Export and import of a space through the SDK: verbatim, idempotent, verified by counts,
into another space id, with and without embeddings; recall answers the same afterwards."""

from __future__ import annotations

import uuid

import pytest

from mnemograph.client import Client, Conflict, InvalidInput, NotFound
from mnemograph.client.transfer import counts_record, mismatches

TURNS = [
    ("user", "Ana", "We picked Postgres for the ledger service."),
    ("assistant", "Bot", "Postgres it is; I will set up the ledger schema."),
    ("user", "Ana", "My dog Rex loves running on the beach in Lisbon."),
    ("user", "Ana", "Remind me to renew the TLS certificate before May."),
]
QUERIES = ["Which database holds the ledger?", "Where does Rex run?", "TLS certificate"]


def _fill(mg: Client, space: str) -> None:
    mg.create_space(space, description="transfer test")
    for n in range(2):
        turns = [{"id": f"s{n}-t{i}", "role": r, "speaker": s, "content": f"{c} (week {n})",
                  "time": f"2024-0{n + 1}-0{i + 1}T10:00:00Z"}
                 for i, (r, s, c) in enumerate(TURNS)]  # fmt: skip
        mg.add_session(space, {"session_id": f"s{n}", "turns": turns})
    mg.supersede(space, "s0-t0", reason="migrated", content="We moved the ledger to SQLite.")
    mg.run_job(space, "schemas")


def _recalls(mg: Client, space: str, digits: int) -> list[list[tuple[str, float]]]:
    out = []
    for q in QUERIES:
        r = mg.recall(space, q, k=5, touch=False, now="2024-06-01T00:00:00Z")
        out.append([(h.id, round(h.score, digits)) for h in r.results])
    return out


@pytest.mark.parametrize("embeddings", [True, False])
def test_export_import_round_trip(live, embeddings):
    src, dst = f"ex-{uuid.uuid4().hex[:8]}", f"im-{uuid.uuid4().hex[:8]}"
    with Client(live.url) as mg:
        _fill(mg, src)
        records = list(mg.export(src, embeddings=embeddings))
        assert records[0]["type"] == "header" and records[-1]["type"] == "counts"
        expected = counts_record(records)
        assert expected is not None and expected.nodes["Memory"] == 9
        assert expected.relationships["SUPERSEDES"] >= 1
        memory = next(r for r in records if r["type"] == "node" and r["key"] == "s0-t0")
        assert memory["props"]["status"] == "superseded"
        assert memory["props"]["event_time"] == {"$datetime": "2024-01-01T10:00:00.000000000+00:00"}
        assert ("embedding" in memory["props"]) is embeddings
        assert mg.transfer_counts(src) == expected

        mg.import_records(dst, records, batch=7)  # small batches: nodes and rels split up
        assert mismatches(expected, mg.transfer_counts(dst)) == []
        again = mg.import_records(dst, records, batch=50)  # idempotent
        assert again.nodes == expected.nodes
        assert mismatches(expected, mg.transfer_counts(dst)) == []
        assert mg.get_memory(dst, "s0-t0").memory.status == "superseded"
        # exported vectors: the same scores; re-embedded: the same ranking (a batch and a
        # single forward pass differ in the last float digits)
        digits = 9 if embeddings else 4
        assert _recalls(mg, dst, digits) == _recalls(mg, src, digits)
        mg.delete_space(src)
        mg.delete_space(dst)


def test_import_refuses_bad_records(live):
    space = f"bad-{uuid.uuid4().hex[:8]}"
    with Client(live.url) as mg:
        with pytest.raises(NotFound) as no_space:
            mg.import_records(space, [{"type": "node", "label": "Memory", "key": "m", "props": {}}])
        assert no_space.value.field == "space"
        mg.create_space(space)
        with pytest.raises(InvalidInput) as bad_label:
            mg.import_records(space, [{"type": "node", "label": "Lease", "key": "x", "props": {}}])
        assert bad_label.value.field == "records.0.label"
        dangling = {"type": "rel", "rel": "NEXT", "from_label": "Memory", "from": "a",
                    "to_label": "Memory", "to": "b", "props": {}}  # fmt: skip
        with pytest.raises(Conflict):  # well formed, but the space lacks both ends
            mg.import_records(space, [dangling])
        assert mg.transfer_counts(space).nodes == {}
        mg.delete_space(space)
