"""How ingest's encoder batches texts: fixed texts per batch against padded word pieces.

    python -m benchmarks.embed_batches [--datasets locomo beam] [--conversations 4 1]
        [--variants texts:64 pieces:1024 pieces:2048/32 pieces:4096/32] [--repeats 2]

For the first conversations of each dataset, the texts ingest embeds
(:func:`benchmarks.perf_ingest.embedded_texts`) go through ingest's own forward pass
(:class:`pipelines.ingest.encode.ChunkEncoder`, sentence and token vectors) once per variant,
variants interleaved per conversation and repeated, each round starting one variant later, so
that the machine's drift falls on all of them alike. ``bare`` is the sentence-transformers
``encode`` that the ingest benchmark compares against (sentence vectors only, 64 texts per
batch); ``texts:N`` batches N texts at a time, longest first; ``pieces:N/T`` fills a batch up
to N padded word pieces and T texts (256 when T is not given). Seconds are summed per dataset,
with the median ratio to ``texts:64`` per conversation and the load average before each
conversation.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import machine
from benchmarks.reports import RESULTS_DIR, write_json

BASELINE = "texts:64"


def parse_variant(text: str) -> tuple[int, int]:
    """``texts:N`` or ``pieces:N[/T]`` as (padded word pieces, texts) per batch."""
    kind, _, value = text.partition(":")
    pieces, _, texts = value.partition("/")
    if kind == "texts":
        return 1 << 30, int(pieces)
    if kind == "pieces":
        return int(pieces), int(texts or 256)
    raise ValueError(f"a variant is texts:N or pieces:N[/T], not {text!r}")


def run_dataset(
    name: str, dataset: Any, variants: Sequence[str], conversations: int, args: Any, enc: Any
) -> dict[str, Any]:
    from benchmarks.perf_ingest import embedded_texts
    from benchmarks.sut import corpus_sessions

    emb = enc.embedder
    seconds: dict[str, float] = {v: 0.0 for v in [*variants, "bare"]}
    ratios: dict[str, list[float]] = {v: [] for v in [*variants, "bare"]}
    loads, texts_n = [], 0
    for conv in list(dataset.conversations)[:conversations]:
        inputs = embedded_texts(enc, corpus_sessions(conv.sessions))
        texts_n += len(inputs)
        loads.append((machine.load_average() or [0.0])[0])
        per: dict[str, float] = {v: 0.0 for v in seconds}
        every = [*variants, "bare"]
        for r in range(args.repeats):
            # Each round starts one variant later, so that no variant always runs first.
            shift = (r + len(loads) - 1) % len(every)
            for variant in every[shift:] + every[:shift]:
                t0 = time.perf_counter()
                if variant == "bare":
                    emb.encode(inputs)
                else:
                    emb.batch_pieces, emb.batch_texts = parse_variant(variant)
                    enc._forward(inputs)
                per[variant] += time.perf_counter() - t0
        for v, s in per.items():
            seconds[v] += s
            ratios[v].append(s / per[BASELINE])
        print(f"{name} {conv.id}: " + " ".join(f"{v}={s:.1f}s" for v, s in per.items()), flush=True)
    return {
        "conversations": min(conversations, len(dataset.conversations)),
        "texts": texts_n,
        "seconds": {v: round(s, 2) for v, s in seconds.items()},
        "ratio_to_baseline": {v: round(s / seconds[BASELINE], 3) for v, s in seconds.items()},
        "median_ratio_per_conversation": {
            v: round(statistics.median(r), 3) for v, r in ratios.items()
        },
        "load_average_1min": {"median": statistics.median(loads), "max": max(loads)},
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Embedding batches: texts against padded word pieces",
        "",
        f"Command: `{result['command']}`  ",
        f"Code: {result['code']['commit']} (dirty: {result['code']['dirty']}), "
        f"{result['started']} to {result['ended']}",
        "",
        "| dataset | variant | seconds | × texts:64 | median per conversation |",
        "|---|---|---|---|---|",
    ]
    for name, row in result["datasets"].items():
        for v, s in row["seconds"].items():
            lines.append(
                f"| {name} ({row['conversations']} conversations, {row['texts']} texts, load "
                f"{row['load_average_1min']['median']:.1f}) | {v} | {s} | "
                f"{row['ratio_to_baseline'][v]} | {row['median_ratio_per_conversation'][v]} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    import shlex
    import sys

    from benchmarks.perf import _ingest_datasets
    from pipelines.ingest.config import DEFAULT_INGEST_CONFIG
    from pipelines.ingest.encode import ChunkEncoder
    from pipelines.models.embeddings import load_embedder

    p = argparse.ArgumentParser(prog="python -m benchmarks.embed_batches")
    p.add_argument("--datasets", nargs="+", default=["locomo", "beam"])
    p.add_argument(
        "--conversations",
        nargs="+",
        type=int,
        default=[4, 1],
        help="conversations of each dataset, in the order of --datasets (the last one repeats)",
    )
    p.add_argument(
        "--variants",
        nargs="+",
        default=[BASELINE, "pieces:1024", "pieces:2048/32", "pieces:4096/32"],
    )
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--name", default="embed-batches")
    p.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    p.add_argument("--locomo-path", default=None)
    p.add_argument("--beam-path", default=None)
    args = p.parse_args(argv)
    variants = list(dict.fromkeys([BASELINE, *args.variants]))
    for v in variants:
        parse_variant(v)
    args.ingest_datasets = args.datasets
    datasets, missing = _ingest_datasets(args)
    emb, _ = load_embedder()
    enc = ChunkEncoder(emb, DEFAULT_INGEST_CONFIG)
    enc._forward(["warm up"] * 64)
    started, load0, code = machine.now_iso(), machine.load_average(), machine.code_version()
    wanted = args.conversations + [args.conversations[-1]] * len(args.datasets)
    counts = {name: wanted[i] for i, name in enumerate(args.datasets)}
    rows = {name: run_dataset(name, ds, variants, counts[name], args, enc) for name, ds in datasets}
    result = {
        "name": args.name,
        "command": "python -m benchmarks.embed_batches " + shlex.join(sys.argv[1:]),
        "code": code,
        "machine": machine.record(load0),
        "started": started,
        "ended": machine.now_iso(),
        "variants": variants,
        "datasets": rows,
        "missing": missing,
    }
    write_json(result, args.out_dir)
    (args.out_dir / f"{args.name}.md").write_text(markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
