"""PyTorch against the ONNX document encoder, side by side in one process
(``python -m benchmarks.encoders``).

1. **Encoders** on exactly the texts ingest embeds for the first ``--conversations`` of a
   dataset (``Ingestor.embedding_texts``: each memory's ``"speaker: content"``, or its chunks),
   in slices of ``--slice`` texts; each slice is embedded with tokens
   (``encode_with_tokens``, ingest's call) by both encoders, the first one alternating, so that
   the machine's load falls on both alike. Reported: texts/s and characters/s (wall clock),
   process CPU seconds, and the agreement of the vectors (cosine of the sentence vectors,
   min/median; cosine of the late-interaction token vectors, min).
2. **Ingest** (unless ``--skip-ingest``): each conversation ingested through
   ``MnemographSystem.prepare`` into a fresh space (then deleted) once per encoder, the order
   alternating per conversation: messages/s and process CPU seconds.

Both encoders are the same embedder object: PyTorch is its batch path with the ONNX document
encoder set aside, exactly main's code path. The load average is sampled at each step.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import machine

ENCODERS = ("torch", "onnx")


@contextmanager
def batches_on(embedder: Any, which: str, onnx: Any) -> Iterator[None]:
    """Run the embedder's batches on ``which`` for the block (``onnx``: the loaded document
    encoder; ``torch``: none, the PyTorch batch path)."""
    saved = embedder._doc
    embedder._doc = onnx if which == "onnx" else None
    try:
        yield
    finally:
        embedder._doc = saved


def _median(values: Sequence[float]) -> float:
    return float(np.median(np.asarray(values, dtype=np.float64)))


def compare_encoders(embedder: Any, onnx: Any, texts: list[str], step: int) -> dict[str, Any]:
    """Section 1 of the module docstring."""
    wall = dict.fromkeys(ENCODERS, 0.0)
    cpu = dict.fromkeys(ENCODERS, 0.0)
    cosines: list[float] = []
    token_min = 1.0
    loads = [machine.load_average()]
    for n, start in enumerate(range(0, len(texts), step)):
        part = texts[start : start + step]
        out: dict[str, tuple[np.ndarray, list[np.ndarray]]] = {}
        for which in ENCODERS if n % 2 == 0 else ENCODERS[::-1]:
            with batches_on(embedder, which, onnx):
                c0, t0 = time.process_time(), time.perf_counter()
                out[which] = embedder.encode_with_tokens(part)
                wall[which] += time.perf_counter() - t0
                cpu[which] += time.process_time() - c0
        (tv, tt), (ov, ot) = out["torch"], out["onnx"]
        cosines.extend((tv * ov).sum(axis=1).tolist())
        for a, b in zip(tt, ot, strict=True):
            if a.shape != b.shape:
                raise AssertionError(f"token vectors differ in shape: {a.shape} vs {b.shape}")
            token_min = min(token_min, float((a * b).sum(axis=1).min()))
        loads.append(machine.load_average())
    chars = sum(len(t) for t in texts)
    rows = {
        w: {
            "wall_s": round(wall[w], 2),
            "cpu_s": round(cpu[w], 2),
            "texts_per_s": round(len(texts) / wall[w], 2),
            "chars_per_s": round(chars / wall[w]),
            "texts_per_cpu_s": round(len(texts) / cpu[w], 2),
        }
        for w in ENCODERS
    }
    return {
        "texts": len(texts),
        "characters": chars,
        "slice": step,
        "encoders": rows,
        "speedup_wall": round(wall["torch"] / wall["onnx"], 2),
        "speedup_cpu": round(cpu["torch"] / cpu["onnx"], 2),
        "sentence_cosine_min": round(min(cosines), 7),
        "sentence_cosine_median": round(_median(cosines), 7),
        "token_cosine_min": round(token_min, 6),
        "load_average_1m": [la[0] for la in loads if la],
    }


def compare_ingest(system: Any, onnx: Any, conversations: Sequence[Any]) -> dict[str, Any]:
    """Section 2 of the module docstring."""
    from benchmarks.sut import corpus_sessions

    tag = uuid.uuid4().hex[:8]
    rows = []
    for n, conv in enumerate(conversations):
        sessions = corpus_sessions(conv.sessions)
        row: dict[str, Any] = {"conversation": conv.id}
        for which in ENCODERS if n % 2 == 0 else ENCODERS[::-1]:
            space = f"enc-{tag}-{which}-{n}"
            load = machine.load_average()
            with batches_on(system.engine.embedder, which, onnx):
                c0 = time.process_time()
                try:
                    stats = system.prepare(space, sessions, schemas=False)
                finally:
                    system.drop(space)
                cpu_s = time.process_time() - c0
            row["turns"] = stats.turns
            row[which] = {
                "seconds": round(stats.seconds, 2),
                "cpu_s": round(cpu_s, 2),
                "messages_per_s": round(stats.turns / stats.seconds, 2),
                "load_average_1m": load[0] if load else None,
            }
        row["speedup"] = round(row["torch"]["seconds"] / row["onnx"]["seconds"], 2)
        rows.append(row)
        print(f"ingest {conv.id}: {json.dumps(row)}", flush=True)
    turns = sum(r["turns"] for r in rows)
    total = {
        w: {
            "seconds": round(sum(r[w]["seconds"] for r in rows), 2),
            "cpu_s": round(sum(r[w]["cpu_s"] for r in rows), 2),
        }
        for w in ENCODERS
    }
    for w in ENCODERS:
        total[w]["messages_per_s"] = round(turns / total[w]["seconds"], 2)
    return {
        "conversations": rows,
        "turns": turns,
        "total": total,
        "speedup_wall": round(total["torch"]["seconds"] / total["onnx"]["seconds"], 2),
        "speedup_cpu": round(total["torch"]["cpu_s"] / total["onnx"]["cpu_s"], 2),
    }


def markdown(result: dict[str, Any]) -> str:
    """The side-by-side table of a result."""
    enc = result["encoders"]
    lines = [
        f"# Document encoders: PyTorch against onnxruntime ({result['dataset']}, "
        f"{enc['texts']} texts, {enc['characters']:,} characters)",
        "",
        f"`{result['command']}` at {result['code']['commit'][:10]}; load average 1 min "
        f"{min(enc['load_average_1m']):.1f}–{max(enc['load_average_1m']):.1f}.",
        "",
        "| encoder | wall s | texts/s | chars/s | CPU s | texts/CPU s |",
        "|---|---|---|---|---|---|",
    ]
    for w in ENCODERS:
        r = enc["encoders"][w]
        lines.append(
            f"| {w} | {r['wall_s']} | {r['texts_per_s']} | {r['chars_per_s']:,} | {r['cpu_s']} "
            f"| {r['texts_per_cpu_s']} |"
        )
    lines += [
        "",
        f"Speed-up {enc['speedup_wall']}× wall, {enc['speedup_cpu']}× CPU. Sentence vectors' "
        f"cosine min {enc['sentence_cosine_min']}, median {enc['sentence_cosine_median']}; "
        f"token vectors' cosine min {enc['token_cosine_min']}.",
        "",
    ]
    ing = result.get("ingest")
    if ing:
        lines += [
            "| conversation | turns | torch s | torch msg/s | onnx s | onnx msg/s | speed-up |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in ing["conversations"]:
            lines.append(
                f"| {r['conversation']} | {r['turns']} | {r['torch']['seconds']} | "
                f"{r['torch']['messages_per_s']} | {r['onnx']['seconds']} | "
                f"{r['onnx']['messages_per_s']} | {r['speedup']}× |"
            )
        t = ing["total"]
        lines += [
            f"| total | {ing['turns']} | {t['torch']['seconds']} | {t['torch']['messages_per_s']}"
            f" | {t['onnx']['seconds']} | {t['onnx']['messages_per_s']} | "
            f"{ing['speedup_wall']}× |",
            "",
            f"Ingest CPU seconds of this process: torch {t['torch']['cpu_s']}, onnx "
            f"{t['onnx']['cpu_s']} ({ing['speedup_cpu']}×).",
            "",
        ]
    return "\n".join(lines)


def _load(dataset: str, path: str | None) -> Any:
    from benchmarks import beam, locomo

    if dataset == "beam":
        return beam.load(path)[0]
    return locomo.load(path)[0]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.encoders", description=__doc__)
    p.add_argument("--dataset", choices=["beam", "locomo"], default="beam")
    p.add_argument("--path", default=None, help="dataset path (default: the shared copy)")
    p.add_argument("--conversations", type=int, default=3, help="first N conversations")
    p.add_argument("--encoder-texts", type=int, default=0, help="at most N texts (0: all)")
    p.add_argument("--slice", type=int, default=64, help="texts per encode_with_tokens call")
    p.add_argument("--skip-ingest", action="store_true")
    p.add_argument("--neo4j-uri", default="bolt://127.0.0.1:7687")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/encoders.json"))
    args = p.parse_args(argv)

    from benchmarks.instance import start_engine
    from benchmarks.mnemograph import MnemographSystem
    from benchmarks.perf import warm_up_graph
    from benchmarks.perf_ingest import embedded_texts
    from benchmarks.sut import corpus_sessions

    code = machine.code_version()
    convs = list(_load(args.dataset, args.path).conversations)[: args.conversations]
    engine = start_engine(args.neo4j_uri)
    try:
        onnx = getattr(engine.embedder, "_doc", None)
        if onnx is None:
            status = getattr(engine.embedder, "document_encoder_status", None)
            print(f"the ONNX document encoder is not active: {status}", file=sys.stderr)
            return 2
        system = MnemographSystem(engine, progress=False)
        texts = [
            t for c in convs for t in embedded_texts(system.ingestor, corpus_sessions(c.sessions))
        ]
        if args.encoder_texts:
            texts = texts[: args.encoder_texts]
        engine.embedder.encode_with_tokens(texts[:16])  # warm both paths up
        with batches_on(engine.embedder, "torch", onnx):
            engine.embedder.encode_with_tokens(texts[:16])
        result: dict[str, Any] = {
            "name": "encoders",
            "kind": "encoders",
            "command": "python -m benchmarks.encoders " + " ".join(map(shlex.quote, sys.argv[1:])),
            "code": code,
            "machine": machine.machine(),
            "started": machine.now_iso(),
            "dataset": f"{args.dataset}: first {len(convs)} conversations",
            "document_encoder": engine.embedder.document_encoder_status.detail,
        }
        result["encoders"] = compare_encoders(engine.embedder, onnx, texts, args.slice)
        print(json.dumps(result["encoders"]), flush=True)
        if not args.skip_ingest:
            warm_up_graph(system)
            result["ingest"] = compare_ingest(system, onnx, convs)
        result["finished"] = machine.now_iso()
    finally:
        engine.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
