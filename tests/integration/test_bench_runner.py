"""The benchmark harness end to end against the real Neo4j fixture: a tiny generic dataset
(2 conversations x 2 sessions x 4 turns, 3 questions) through ingest, recall (every preset),
the flat context baseline and the assembler, then scoring and reports; plus a small perf run."""

from __future__ import annotations

import argparse
import json

import pytest

from benchmarks import perf, reports, runner
from benchmarks.context_bench import AssemblerContext
from benchmarks.dense_rag import DenseRagContext
from benchmarks.format import parse_dataset
from benchmarks.mnemograph import RECALL_PRESETS, MnemographSystem
from benchmarks.sut import QueryInput
from pipelines import spaces
from pipelines.errors import NotFound


def tiny() -> dict:
    def conv(cid: str, thing: str, town: str, questions: list[dict]) -> dict:
        return {
            "id": cid,
            "speakers": ["Ann", "Ben"],
            "sessions": [
                {
                    "id": "s1",
                    "started_at": "2024-01-10T10:00:00",
                    "turns": [
                        {"id": "a1", "role": "user", "speaker": "Ann",
                         "content": f"I spent the weekend working on my {thing}."},
                        {"id": "a2", "role": "assistant", "speaker": "Ben",
                         "content": "Sounds like a lot of work. How is it going?"},
                        {"id": "a3", "role": "user", "speaker": "Ann",
                         "content": f"The {thing} is nearly done, I painted it teal on Sunday."},
                        {"id": "a4", "role": "assistant", "speaker": "Ben",
                         "content": "Teal is a bold choice, I like it."},
                    ],
                },
                {
                    "id": "s2",
                    "started_at": "2024-03-02T18:30:00",
                    "turns": [
                        {"id": "b1", "role": "user", "speaker": "Ann",
                         "content": f"Guess what, I sold the {thing} last week."},
                        {"id": "b2", "role": "assistant", "speaker": "Ben",
                         "content": "No way! Who bought it?"},
                        {"id": "b3", "role": "user", "speaker": "Ann",
                         "content": f"A collector from {town} paid 300 euros for it."},
                        {"id": "b4", "role": "assistant", "speaker": "Ben",
                         "content": "That is a great price."},
                    ],
                },
            ],
            "questions": questions,
        }  # fmt: skip

    t = "2024-03-05T00:00:00"
    return {
        "name": "tiny-integration",
        "conversations": [
            conv(
                "c1",
                "canoe",
                "Rotterdam",
                [
                    {"id": "q1", "text": "What colour did Ann paint the canoe?",
                     "category": "single-hop", "evidence": ["a3"], "question_time": t},
                    {"id": "q2", "text": "Who bought the canoe, and from which town?",
                     "category": "multi-hop", "evidence": ["b1", "b3"], "question_time": t},
                ],
            ),
            conv(
                "c2",
                "harpsichord",
                "Lyon",
                [
                    {"id": "q3", "text": "What is the name of Ann's parrot?",
                     "category": "adversarial", "evidence": [], "unanswerable": True,
                     "question_time": t},
                ],
            ),
        ],
    }  # fmt: skip


class Recording(MnemographSystem):
    """The real system, recording what the harness hands it."""

    seen: list[object]

    def recall(self, space, query, config, k, order=None):
        self.seen.append(query)
        return super().recall(space, query, config, k, order)


def test_runner_end_to_end(engine, tmp_path):
    ds = parse_dataset(tiny())
    system = Recording(engine, progress=False)
    system.seen = []
    plans = [
        runner.ContextPlan(AssemblerContext(engine, "assembler")),
        runner.ContextPlan(AssemblerContext(engine, "assembler-flat")),
        runner.ContextPlan(DenseRagContext(engine)),
        runner.ContextPlan(
            AssemblerContext(engine, "assembler-no-ppr"), budgets=[512], settings=["scale"]
        ),
    ]
    # two questions in flight, as `make bench-locomo` runs them
    options = runner.RunOptions(
        configs=list(RECALL_PRESETS), budgets=[300, 1000], progress=False, flat_k=20, workers=2
    )
    results = runner.run_benchmark(system, ds, options, plans)

    assert all(type(q) is QueryInput for q in system.seen)
    assert len(system.seen) == 3 * (len(RECALL_PRESETS) + 1) * 2  # presets + flat, 2 settings
    per, scale = results["per-conversation"], results["scale"]
    assert per["pool"]["memories"] == {"mean": 8.0, "min": 8, "max": 8, "total": 16}
    assert scale["pool"]["memories"]["total"] == 16 and scale["pool"]["spaces"] == 1
    assert scale["pool"]["stages"]["total"] == 4  # each session its own explicit stage
    for res in (per, scale):
        assert res["questions"] == 3 and res["questions_without_evidence"] == 1
        for config in RECALL_PRESETS:
            c = res["configs"][config]
            assert c["turn"]["n"] == 2 and c["session"]["n"] == 2
            for level in ("turn", "session"):
                for m in ("R@1", "R@5", "R@10", "MRR"):
                    assert 0.0 <= c[level][m] <= 1.0
            # 8 (or 16) memories and k = 10: the gold of every question is retrieved
            assert c["session"]["R@10"] == 1.0
            assert c["abstention"]["tp"] + c["abstention"]["fn"] == 1
        # "teal" and "canoe" only co-occur in a3: BM25 ranks it first
        assert res["configs"]["fulltext"]["turn"]["by_category"]["single-hop"]["R@1"] == 1.0
        assert set(res["context"]["flat"]) == {"300", "1000"}
        assert set(res["context"]["assembler"]) == {"300", "1000"}
        assert res["context"]["flat"]["1000"]["any"] == 1.0  # everything fits in 1000 tokens
        # context precision: every context's text split into its memories' records
        # the dense-RAG baseline: the whole prompt within the budget (chars/3)
        dense = res["context"]["dense-rag"]
        assert dense["1000"]["any"] == 1.0 and dense["300"]["used_tokens_mean"] <= 300
        for system in ("flat", "assembler", "dense-rag"):
            prec = res["context"][system]["1000"]["precision"]
            assert prec["n"] == 2 and 0.0 < prec["turn"] <= prec["session"] <= 1.0
            assert prec["unattributed"] == 0.0
    assert "assembler-no-ppr" in scale["context"] and "assembler-no-ppr" not in per["context"]
    # where the time goes: the read path's own steps, and each conversation's median
    full = per["configs"]["full"]
    assert {"embed", "candidates", "fuse"} <= set(full["steps_p50_ms"])
    assert all(v is not None and v >= 0.0 for v in full["steps_p50_ms"].values())
    assert set(full["latency_by_conversation"]) == {"c1", "c2"}
    assert "total" not in full["steps_p50_ms"]
    assert all(set(u["load_average"]) == {"ingest", "recall"} for u in per["ingest"])
    assert set(scale["context"]["assembler-no-ppr"]) == {"512"}

    # every space of this run was deleted (a shared database may hold other runs' kept ones)
    made = [u["space"] for res in (per, scale) for u in res["ingest"]]
    assert len(made) == 3
    for name in made:
        with pytest.raises(NotFound):
            spaces.get(engine.store, name)
    result = {
        "name": "tiny-integration",
        "dataset": {"name": ds.name},
        "summary": runner.summary_keys(results),
        "results": results,
    }
    files = reports.write_recall_report(result, tmp_path)
    assert json.loads(files["json"].read_text())["summary"]["scale"]["full"]["session.R@10"] == 1.0
    text = files["markdown"].read_text()
    assert "Median ms per read-path step" in text and "Median ms per conversation" in text


def test_perf_small(engine, tmp_path):
    ds = parse_dataset(tiny())
    system = MnemographSystem(engine, progress=False)
    # a small warm-up and small sizes: the same steps as a real run (warm-up space made and
    # dropped, a space filled then extended), at a fraction of the ingest
    ingest = perf.ingest_throughput(engine, system, ds, progress=False, warm_up_turns=30)
    assert ingest["total"]["turns"] == 16
    assert ingest["total"]["ingest_turns_per_s"] > 0 and ingest["total"]["ratio"] > 0
    assert ingest["total"]["embedded_texts"] == 16
    assert all(r["memories"] == 8 for r in ingest["conversations"])
    assert all(r["load_average"] for r in ingest["conversations"])
    assert set(ingest["total"]["per_100_memories"]) >= {"entities", "mentions", "cooccurrences"}
    args = argparse.Namespace(
        seed=7,
        queries=4,
        repeats=1,
        warmup=1,
        k=10,
        context_window=2000,
        via="auto",
        sizes=[40, 100],
        keep_spaces=False,
    )
    rows, info = perf.latency_by_size(engine, system, args, neo_pid=None)
    assert [r["memories"] for r in rows] == [40, 100]
    assert info["recall_path"].startswith(("HTTP", "service"))
    for r in rows:
        assert r["recall"]["n"] == 4 and r["recall"]["p50_ms"] > 0
        assert r["vector_bare"]["p50_ms"] > 0
        assert r["rss_peak_mb"]["api_process"] > 0
        # every /context call is counted under the mode the assembler chose
        assert r["context"]["n"] == 4 and sum(r["context_modes"].values()) == 4
        assert set(r["context_modes"]) <= {"staged", "flat"}
        assert {m: v["n"] for m, v in r["context_by_mode"].items()} == r["context_modes"]
    with pytest.raises(NotFound):
        spaces.get(engine.store, info["space"])
