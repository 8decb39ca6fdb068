"""The reader-judged benchmark: what a reader model answers from Mnemograph's context against
what it answers from a dense-RAG prompt of the same size, scored blind against the dataset's
rubric. In stages, so that people or agents do the reading and the grading:

    python -m benchmarks.reader_judged prepare --dataset beam --path DIR --run RESULT.json \\
        --packs OUT/packs --key OUT/private/key.json --neo4j-uri bolt://...
    # readers: benchmarks/reader_instructions.md, one pack at a time -> OUT/answers/*.jsonl
    python -m benchmarks.reader_judged grade-pack --dataset beam --path DIR \\
        --key OUT/private/key.json --answers OUT/answers --out OUT/grader
    # graders: benchmarks/grader_instructions.md, one pack at a time -> OUT/grades/*.jsonl
    python -m benchmarks.reader_judged report --key OUT/private/key.json --grades OUT/grades \\
        --name reader-beam-100k

``prepare`` reads the spaces a harness run kept (``--keep-spaces``; their names are in the
result JSON given with ``--run``) and never writes to them; it sees question texts and times
only. Gold answers and rubrics are read by ``grade-pack`` alone. Method: docs/reader-judged.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.format import Dataset

HERE = Path(__file__).resolve().parent
READER_INSTRUCTIONS = HERE / "reader_instructions.md"
GRADER_INSTRUCTIONS = HERE / "grader_instructions.md"
DEFAULT_BUDGETS = (2000, 4000)
DATASETS = ("beam", "locomo", "generic")


def load_dataset(kind: str, path: str | None) -> tuple[Dataset, Path]:
    """The dataset and the path it was read from."""
    if kind == "beam":
        from benchmarks import beam

        root = beam.resolve_path(path)
        return beam.load(root, name=f"beam-{root.name.lower()}")[0], root
    if kind == "locomo":
        from benchmarks import locomo

        file = locomo.resolve_path(path)
        return locomo.load(file)[0], file
    from benchmarks.format import load_dataset as load_generic

    if not path:
        raise ValueError("--path is required for --dataset generic")
    return load_generic(path), Path(path).resolve()


def spaces_of_run(run: dict[str, Any], setting: str) -> dict[str, str]:
    """Conversation id -> the space a harness result's ``setting`` asked it in."""
    try:
        units = run["results"][setting]["ingest"]
    except KeyError:
        raise ValueError(f"the run has no setting {setting!r} with spaces") from None
    return {cid: u["space"] for u in units for cid in u["conversations"]}


def _leftovers(folder: Path, pattern: str) -> list[Path]:
    """Files of an earlier run that a new one would mix with (packs are never overwritten)."""
    return sorted(folder.glob(pattern)) if folder.is_dir() else []


# ------------------------------------------------------------------------------------ prepare


def cmd_prepare(args: argparse.Namespace, engine: Any = None) -> int:
    """Both prompts of every question at every budget, blinded (``engine``: an engine already
    started, else one on ``--neo4j-uri`` or the benchmarks' own Neo4j)."""
    from benchmarks import machine
    from benchmarks.dense_rag import dense_prompt
    from benchmarks.instance import neo4j_for_bench, start_engine
    from benchmarks.reader_packs import Keyed, new_labels, write_reader_packs
    from benchmarks.reader_prompts import CONDITIONS, PromptMaker
    from pipelines import spaces
    from pipelines.errors import NotFound

    stale = _leftovers(Path(args.packs), "reader-*.jsonl") + (
        [Path(args.key)] if Path(args.key).exists() else []
    )
    if stale:
        print(f"error: an earlier run's files are in the way: {stale[0]}", file=sys.stderr)
        return 2
    dataset, source = load_dataset(args.dataset, args.path)
    run_path = Path(args.run).resolve()
    space_of = spaces_of_run(json.loads(run_path.read_text(encoding="utf-8")), args.setting)
    convs = [c for c in dataset.conversations if c.id in space_of]
    if args.limit_conversations:
        convs = convs[: args.limit_conversations]
    if not convs:
        print("error: no conversation of the dataset has a space in the run", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else secrets.randbits(64)
    rng = random.Random(seed)
    budgets = sorted(set(args.budgets))
    code = machine.code_version()
    started = machine.now_iso()
    t0 = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if engine is None:
            neo = stack.enter_context(neo4j_for_bench(args.neo4j_uri, keep=True))
            engine = start_engine(neo.uri, neo.auth)
            stack.callback(engine.close)
        for c in convs:
            try:
                spaces.get(engine.store, space_of[c.id])
            except NotFound:
                print(f"error: space {space_of[c.id]} ({c.id}) not found", file=sys.stderr)
                return 2
        maker = PromptMaker(engine)
        stack.callback(maker.close)
        questions = [(c, q) for c in convs for q in c.questions[: args.limit_questions]]
        made: list[tuple[Keyed, str]] = []
        for n, (c, q) in enumerate(questions, 1):
            space = space_of[c.id]
            hits = maker.dense_hits(space, q.text, q.question_time)
            for budget in budgets:
                context = maker.mnemograph(space, q.text, q.question_time, budget)
                dense = dense_prompt(q.text, hits, len(context)).prompt
                for condition, prompt in zip(CONDITIONS, (context, dense), strict=True):
                    keyed = Keyed(
                        q.id, c.id, q.category, condition, budget, space, q.text, len(prompt)
                    )
                    made.append((keyed, prompt))
            if n % 20 == 0 or n == len(questions):
                print(f"{n}/{len(questions)} questions", flush=True)
    labels = new_labels(len(made), rng)
    entries = dict(zip(labels, made, strict=True))
    packs = Path(args.packs)
    meta = {
        "dataset": dataset.name,
        "dataset_kind": args.dataset,
        "dataset_path": str(source),
        "run": str(run_path),
        "setting": args.setting,
        "budgets": budgets,
        "conditions": list(CONDITIONS),
        "seed": seed,
        "batch_size": args.batch_size,
        "code": code,
        "created_at": started,
        "seconds": round(time.perf_counter() - t0, 1),
        "command": "python -m benchmarks.reader_judged " + " ".join(sys.argv[1:]),
    }
    files = write_reader_packs(entries, packs, Path(args.key), args.batch_size, rng, meta)
    shutil.copyfile(READER_INSTRUCTIONS, packs / "instructions.md")
    print(f"wrote {len(entries)} prompts in {len(files)} packs to {packs}; key {args.key}")
    return 0


# --------------------------------------------------------------------------------- grade-pack


def cmd_grade_pack(args: argparse.Namespace) -> int:
    from benchmarks import reader_gold
    from benchmarks.reader_packs import (
        PackError,
        by_label,
        grader_rows,
        jsonl_files,
        read_jsonl,
        read_key,
        write_grader_packs,
    )

    meta, key = read_key(Path(args.key))
    kind = args.dataset or meta["dataset_kind"]
    dataset, source = load_dataset(kind, args.path or meta.get("dataset_path"))
    gold = (
        reader_gold.from_beam(dataset, source)
        if kind == "beam"
        else reader_gold.from_dataset(dataset)
    )
    try:
        answers = by_label(read_jsonl(jsonl_files(Path(args.answers))), key, "answers")
        missing = sorted(set(key) - set(answers))
        if missing and not args.allow_missing:
            raise PackError(
                f"{len(missing)} labels have no answer (e.g. {', '.join(missing[:5])}); "
                "pass --allow-missing to grade the others"
            )
        rows = grader_rows(key, answers, gold)
    except PackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rng = random.Random(args.seed if args.seed is not None else secrets.randbits(64))
    out = Path(args.out)
    if _leftovers(out, "grader-*.jsonl"):
        print(f"error: {out} already holds grader packs", file=sys.stderr)
        return 2
    files = write_grader_packs(rows, key, out, args.batch_size, rng)
    shutil.copyfile(GRADER_INSTRUCTIONS, out / "instructions.md")
    print(f"wrote {len(rows)} answers in {len(files)} grader packs to {out}")
    return 0


# ------------------------------------------------------------------------------------- report


def cmd_report(args: argparse.Namespace) -> int:
    from benchmarks.reader_packs import PackError, by_label, jsonl_files, read_jsonl, read_key
    from benchmarks.reader_report import markdown, unblind
    from benchmarks.reports import RESULTS_DIR

    meta, key = read_key(Path(args.key))
    try:
        grades = by_label(read_jsonl(jsonl_files(Path(args.grades))), key, "grades")
        result = unblind(key, grades)
    except PackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out_dir = Path(args.out_dir) if args.out_dir else RESULTS_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    public_meta = {k: v for k, v in meta.items() if k != "packs"}
    doc = {"name": args.name, "kind": "reader-judged", "prepared": public_meta, **result}
    (out_dir / f"{args.name}.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out_dir / f"{args.name}.md").write_text(markdown(args.name, public_meta, result))
    print(json.dumps({b: {k: v for k, v in r.items() if k != "by_ability"}
                      for b, r in result["budgets"].items()}, indent=2))  # fmt: skip
    print(f"wrote {out_dir / args.name}.json and .md")
    return 0


# --------------------------------------------------------------------------------------- main


def _dataset_args(p: argparse.ArgumentParser, default: str | None) -> None:
    p.add_argument("--dataset", choices=DATASETS, default=default, help=f"default {default}")
    p.add_argument("--path", default=None, help="dataset file or folder (default: shared copy)")


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="python -m benchmarks.reader_judged", description=__doc__)
    sub = root.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="write the blind reader packs and the private key")
    _dataset_args(p, "beam")
    p.add_argument("--run", required=True, help="harness result JSON whose spaces were kept")
    p.add_argument("--setting", default="per-conversation")
    p.add_argument("--budgets", nargs="+", type=int, default=list(DEFAULT_BUDGETS))
    p.add_argument("--packs", required=True, help="folder for reader-NN.jsonl")
    p.add_argument("--key", required=True, help="key.json, in a folder apart from the packs")
    p.add_argument("--batch-size", type=int, default=20)
    p.add_argument("--seed", type=int, default=None, help="default: random (recorded in key)")
    p.add_argument("--neo4j-uri", default=None)
    p.add_argument("--limit-conversations", type=int, default=None)
    p.add_argument("--limit-questions", type=int, default=None)
    p.set_defaults(fn=cmd_prepare)
    p = sub.add_parser("grade-pack", help="write the blind grader packs from the answers")
    _dataset_args(p, None)  # None: the key's
    p.add_argument("--key", required=True)
    p.add_argument("--answers", required=True, help="folder of the readers' *.jsonl")
    p.add_argument("--out", required=True, help="folder for grader-NN.jsonl")
    p.add_argument("--batch-size", type=int, default=20)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--allow-missing", action="store_true", help="grade the answered labels")
    p.set_defaults(fn=cmd_grade_pack)
    p = sub.add_parser("report", help="un-blind the grades: scores, pairs, sign test")
    p.add_argument("--key", required=True)
    p.add_argument("--grades", required=True, help="folder of the graders' *.jsonl")
    p.add_argument("--name", required=True, help="result name: benchmarks/results/NAME.{json,md}")
    p.add_argument("--out-dir", default=None)
    p.set_defaults(fn=cmd_report)
    return root


def main(argv: list[str] | None = None, engine: Any = None) -> int:
    """The command line (``engine``: prepare on an engine already started, as tests do)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    args = parser().parse_args(argv)
    try:
        code: int = cmd_prepare(args, engine) if args.fn is cmd_prepare else args.fn(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
