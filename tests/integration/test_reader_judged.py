"""The reader-judged benchmark's plumbing end to end against the real Neo4j fixture: a tiny
synthetic dataset ingested, ``prepare`` writing blind packs and the key, a trivial
deterministic reader (the prompt's first record line), ``grade-pack``, a trivial grader (a
nugget is met when the answer contains it), ``report``. Checked: blinding (no pack names a
condition, a question id or a gold answer), un-blinding, and the sign test's arithmetic."""

from __future__ import annotations

import json
import math
import uuid

import pytest

from benchmarks import context_rescore, metrics, reader_judged, runner
from benchmarks.context_bench import FlatRecallContext
from benchmarks.dense_rag import DenseRagContext
from benchmarks.format import dataset_to_json, parse_dataset
from benchmarks.mnemograph import MnemographSystem
from benchmarks.reader_packs import read_jsonl, read_key, write_jsonl
from benchmarks.reader_prompts import CONDITIONS
from benchmarks.runner import _unit_sessions


def tiny() -> dict:
    turns = [
        ("a1", "user", "Ann", "I adopted a grey cat called Pepper in May."),
        ("a2", "assistant", "Ben", "Pepper is a lovely name for a grey cat."),
        ("a3", "user", "Ann", "My sister Lotte lives in Utrecht and teaches cello."),
        ("a4", "assistant", "Ben", "Cello lessons in Utrecht sound wonderful."),
        ("a5", "user", "Ann", "Always answer me in short bullet points, please."),
        ("a6", "assistant", "Ben", "Understood, short bullet points from now on."),
    ]
    qs = [
        ("q1", "What is the name of Ann's cat?", "extraction", ["a1"], "Pepper"),
        ("q2", "Where does Ann's sister live?", "extraction", ["a3"], "Utrecht"),
        ("q3", "Which instrument does Lotte teach?", "multi", ["a3"], "cello"),
        ("q4", "What is Ann's favourite film?", "abstention", [], None),
    ]
    return {
        "name": "tiny-reader",
        "conversations": [
            {
                "id": "c1",
                "speakers": ["Ann", "Ben"],
                "sessions": [
                    {
                        "id": "s1",
                        "started_at": "2024-05-10T10:00:00",
                        "turns": [
                            {"id": i, "role": r, "speaker": sp, "content": t}
                            for i, r, sp, t in turns
                        ],
                    }
                ],
                "questions": [
                    {
                        "id": qid,
                        "text": text,
                        "category": cat,
                        "evidence": ev,
                        "answer": ans,
                        "unanswerable": ans is None,
                        "question_time": "2024-06-01T00:00:00",
                    }
                    for qid, text, cat, ev, ans in qs
                ],
            }
        ],
    }


def first_record_line(prompt: str) -> str:
    """The trivial reader: the first line of the prompt's first record (or I don't know)."""
    for line in prompt.split("\n"):
        if ": " in line and not line.startswith(("[", "<", "#", " ")):
            return line
    return "I don't know"


def test_sign_test_arithmetic():
    assert metrics.sign_test(0, 0) == 1.0
    assert metrics.sign_test(3, 0) == pytest.approx(2 / 8)  # 2 * (1/2)^3
    assert metrics.sign_test(0, 3) == metrics.sign_test(3, 0)
    assert metrics.sign_test(7, 6) == 1.0  # capped
    assert metrics.sign_test(21, 9) == pytest.approx(
        2 * sum(math.comb(30, i) for i in range(10)) / 2**30
    )
    assert metrics.sign_test(1, 1) == 1.0
    with pytest.raises(ValueError):
        metrics.sign_test(-1, 2)


def test_prepare_grade_report_end_to_end(engine, tmp_path):
    raw = tiny()
    ds = parse_dataset(raw)
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(dataset_to_json(ds)))
    system = MnemographSystem(engine, progress=False)
    space = f"bench-reader-{uuid.uuid4().hex[:8]}"
    system.drop(space)
    system.prepare(space, _unit_sessions(ds.conversations, False, True))
    run = tmp_path / "run.json"
    run.write_text(
        json.dumps(
            {
                "results": {
                    "per-conversation": {"ingest": [{"space": space, "conversations": ["c1"]}]}
                }
            }
        )
    )
    packs, key_path = tmp_path / "packs", tmp_path / "private" / "key.json"
    try:
        argv = f"prepare --dataset generic --path {data} --run {run} --packs {packs} --key "
        argv += f"{key_path} --budgets 300 800 --batch-size 3 --seed 7"
        assert reader_judged.main(argv.split(), engine=engine) == 0
        assert reader_judged.main(argv.split(), engine=engine) == 2  # never over an earlier run
        # the same kept space, rescored for context recall and precision (no ingest)
        dense = DenseRagContext(engine)
        try:
            units = context_rescore.units_of_run(json.loads(run.read_text()), "per-conversation")
            kept = context_rescore.collect_kept(
                ds.conversations, units, FlatRecallContext(system), [dense], [300], "x"
            )
        finally:
            dense.close()
        rescored = runner.score(ds, kept, runner.RunOptions(configs=[], budgets=[300]))
        assert set(rescored["context"]) == {"flat", "dense-rag"}
        assert rescored["pool"]["memories"]["total"] == 6
        for sys_ in ("flat", "dense-rag"):
            c = rescored["context"][sys_]["300"]
            assert c["n"] == 3 and c["precision"]["n"] == 3 and c["precision"]["turn"] > 0
    finally:
        system.drop(space)
        system.close()

    # blinding: packs hold label, question, prompt only; nothing names a condition, a
    # question id, a category or a gold answer, and no batch holds a question twice
    _, key = read_key(key_path)
    assert len(key) == 4 * 2 * 2  # questions x conditions x budgets
    pack_files = sorted(packs.glob("reader-*.jsonl"))
    assert len(pack_files) == math.ceil(16 / 3)
    rows = read_jsonl(pack_files)
    assert sorted(r["label"] for r in rows) == sorted(key)
    forbidden = [*CONDITIONS, "c1:", "q1", "abstention", 'Pepper"', "tiny-reader"]
    for f in [*pack_files, packs / "instructions.md"]:
        text = f.read_text()
        for word in forbidden:
            assert word not in text, (f.name, word)
    for f in pack_files:
        batch = read_jsonl([f])
        assert all(set(r) == {"label", "question", "prompt"} for r in batch)
        assert len({r["question"] for r in batch}) == len(batch)
    prompts = {r["label"]: r["prompt"] for r in rows}
    for label, k in key.items():
        assert prompts[label].endswith(f"## Query\n{k.question}")
        assert len(prompts[label]) == k.prompt_chars
    # the dense prompt has the mnemograph prompt's size at most
    sizes = {(k.question_id, k.condition, k.budget): k.prompt_chars for k in key.values()}
    for (qid, cond, budget), n in sizes.items():
        if cond == "dense-rag":
            assert n <= sizes[(qid, "mnemograph", budget)]
    assert "Pepper" in " ".join(prompts.values())  # the evidence reached the reader

    # a trivial deterministic reader, one pack at a time
    answers = tmp_path / "answers"
    for f in pack_files:
        write_jsonl(
            answers / f.name,
            [
                {"label": r["label"], "answer": first_record_line(r["prompt"])}
                for r in read_jsonl([f])
            ],
        )
    grader = tmp_path / "grader"
    args = ["grade-pack", "--key", str(key_path), "--answers", str(answers), "--out", str(grader)]
    assert reader_judged.main([*args, "--seed", "3"]) == 0
    graded = read_jsonl(sorted(grader.glob("grader-*.jsonl")))
    assert sorted(g["label"] for g in graded) == sorted(key)
    for g in graded:
        k = key[g["label"]]
        assert set(g) == {"label", "question", "answer", "gold_answer", "nuggets", "abstention"}
        assert g["abstention"] == (k.category == "abstention")
        assert not any(c in json.dumps(g) for c in CONDITIONS)
    # a trivial grader: a nugget is met when the answer contains its text (abstention: when
    # the answer abstains); the first grade's own score is wrong on purpose
    scored, lines = {}, []
    for g in graded:
        if g["abstention"]:
            s = [1.0 if "don't know" in g["answer"] else 0.0]
        else:
            s = [1.0 if n.lower() in g["answer"].lower() else 0.0 for n in g["nuggets"]]
        scored[g["label"]] = sum(s) / len(s)
        own = 1 - scored[g["label"]] if not lines else scored[g["label"]]
        lines.append({"label": g["label"], "nugget_scores": s, "score": own})
    grades = tmp_path / "grades"
    write_jsonl(grades / "grades-01.jsonl", lines[:7])
    write_jsonl(grades / "grades-02.jsonl", lines[7:])

    out = tmp_path / "results"
    args = ["report", "--key", str(key_path), "--grades", str(grades), "--name", "reader-tiny"]
    assert reader_judged.main([*args, "--out-dir", str(out)]) == 0
    doc = json.loads((out / "reader-tiny.json").read_text())
    assert doc["graded"] == 16 and doc["ungraded"] == 0 and doc["score_disagreements"] == 1
    # un-blinding: recompute every figure from the key and the grader's scores
    for budget in ("300", "800"):
        b = doc["budgets"][budget]
        per = {
            (k.question_id, k.condition): scored[label]
            for label, k in key.items()
            if str(k.budget) == budget
        }
        for c in CONDITIONS:
            vals = [v for (q, cond), v in per.items() if cond == c]
            assert b[c]["n"] == 4 and b[c]["mean"] == pytest.approx(sum(vals) / 4, abs=1e-4)
        diffs = [per[(q, "mnemograph")] - per[(q, "dense-rag")] for q in ("q1", "q2", "q3", "q4")]
        wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
        assert (b["wins"], b["losses"], b["ties"]) == (wins, losses, 4 - wins - losses)
        assert b["sign_test_p"] == pytest.approx(metrics.sign_test(wins, losses), abs=1e-6)
        assert set(b["by_ability"]) == {"extraction", "multi", "abstention"}
        assert b["by_ability"]["extraction"]["mnemograph"]["n"] == 2
    md = (out / "reader-tiny.md").read_text()
    assert "| budget | mnemograph | dense-rag |" in md and "per ability" in md
