"""Document encoders side by side in one process (``python -m benchmarks.encoders``): PyTorch
float32 (``torch``), the ONNX document encoder (``onnx``, the default) and PyTorch bfloat16
(``bf16``), any two or more of them (``--encoders``; the first is the baseline).

For each ``--dataset`` (its first ``--conversations``):

1. **Encoders** on exactly the texts ingest embeds (``Ingestor.embedding_texts``: each
   memory's ``"speaker: content"``, or its chunks), in slices of ``--slice`` texts; each slice
   is embedded with tokens (``encode_with_tokens``, ingest's call) by every encoder, the first
   one rotating, so that the machine's load falls on all alike. Reported: texts/s and
   characters/s (wall clock), process CPU seconds, and each encoder's agreement with the
   baseline (cosine of the sentence vectors, min/median; of the token vectors, min).
2. **Ingest** (unless ``--skip-ingest``): each conversation ingested through
   ``MnemographSystem.prepare`` into a fresh space (then deleted) once per encoder, the order
   rotating per conversation: seconds, messages/s and process CPU seconds.

Every encoder runs inside the same embedder object (its batch path with the batch encoder
swapped), so tokenization, batching and token-vector packing are the product's. The load
average is sampled at each step.
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

ENCODERS = ("torch", "onnx", "bf16")


def batch_encoders(embedder: Any, names: Sequence[str]) -> dict[str, Any]:
    """Each named encoder as the embedder's batch path takes it (``torch``: ``None``)."""
    from pipelines.models.bf16_encoder import Bf16DocumentEncoder, load_bf16_encoder
    from pipelines.models.document_encoder import OnnxDocumentEncoder

    out: dict[str, Any] = {}
    active = getattr(embedder, "_doc", None)
    for name in names:
        if name == "torch":
            out[name] = None
        elif name == "onnx":
            if not isinstance(active, OnnxDocumentEncoder):
                raise RuntimeError(f"the ONNX document encoder is not active: {active!r}")
            out[name] = active
        elif isinstance(active, Bf16DocumentEncoder):
            out[name] = active
        else:
            enc, status = load_bf16_encoder(
                embedder._model, embedder._batch_ids, embedder._torch_batch
            )
            if enc is None:
                raise RuntimeError(status.detail)
            out[name] = enc
    return out


@contextmanager
def batches_on(embedder: Any, encoder: Any) -> Iterator[None]:
    """Run the embedder's batches on ``encoder`` for the block (``None``: PyTorch float32)."""
    saved = embedder._doc
    embedder._doc = encoder
    try:
        yield
    finally:
        embedder._doc = saved


def _median(values: Sequence[float]) -> float:
    return float(np.median(np.asarray(values, dtype=np.float64)))


def _rotated(names: Sequence[str], n: int) -> list[str]:
    k = n % len(names)
    return [*names[k:], *names[:k]]


def _agreement(
    base: tuple[np.ndarray, list[np.ndarray]], other: tuple[np.ndarray, list[np.ndarray]]
) -> tuple[list[float], float]:
    """Sentence-vector cosines of ``other`` to ``base`` and the smallest token-vector cosine."""
    (bv, bt), (ov, ot) = base, other
    token_min = 1.0
    for a, b in zip(bt, ot, strict=True):
        if a.shape != b.shape:
            raise AssertionError(f"token vectors differ in shape: {a.shape} vs {b.shape}")
        token_min = min(token_min, float((a * b).sum(axis=1).min()))
    return (bv * ov).sum(axis=1).tolist(), token_min


def compare_encoders(
    embedder: Any, encoders: dict[str, Any], texts: list[str], step: int
) -> dict[str, Any]:
    """Section 1 of the module docstring; the first of ``encoders`` is the baseline."""
    names = list(encoders)
    wall = dict.fromkeys(names, 0.0)
    cpu = dict.fromkeys(names, 0.0)
    cosines: dict[str, list[float]] = {n: [] for n in names[1:]}
    token_min = dict.fromkeys(names[1:], 1.0)
    loads = [machine.load_average()]
    for n, start in enumerate(range(0, len(texts), step)):
        part = texts[start : start + step]
        out: dict[str, tuple[np.ndarray, list[np.ndarray]]] = {}
        for which in _rotated(names, n):
            with batches_on(embedder, encoders[which]):
                c0, t0 = time.process_time(), time.perf_counter()
                out[which] = embedder.encode_with_tokens(part)
                wall[which] += time.perf_counter() - t0
                cpu[which] += time.process_time() - c0
        for which in names[1:]:
            cos, tok = _agreement(out[names[0]], out[which])
            cosines[which].extend(cos)
            token_min[which] = min(token_min[which], tok)
        loads.append(machine.load_average())
    chars = sum(len(t) for t in texts)
    rows = {
        w: {
            "wall_s": round(wall[w], 2),
            "cpu_s": round(cpu[w], 2),
            "texts_per_s": round(len(texts) / wall[w], 2),
            "chars_per_s": round(chars / wall[w]),
            "texts_per_cpu_s": round(len(texts) / cpu[w], 2),
            "speedup_wall": round(wall[names[0]] / wall[w], 2),
            "speedup_cpu": round(cpu[names[0]] / cpu[w], 2),
        }
        for w in names
    }
    agreement = {
        w: {
            "sentence_cosine_min": round(min(cosines[w]), 7),
            "sentence_cosine_median": round(_median(cosines[w]), 7),
            "token_cosine_min": round(token_min[w], 6),
        }
        for w in names[1:]
    }
    return {
        "texts": len(texts),
        "characters": chars,
        "slice": step,
        "baseline": names[0],
        "encoders": rows,
        "agreement": agreement,
        "load_average_1m": [la[0] for la in loads if la],
    }


def compare_ingest(
    system: Any, encoders: dict[str, Any], conversations: Sequence[Any]
) -> dict[str, Any]:
    """Section 2 of the module docstring."""
    from benchmarks.sut import corpus_sessions

    names = list(encoders)
    tag = uuid.uuid4().hex[:8]
    rows = []
    for n, conv in enumerate(conversations):
        sessions = corpus_sessions(conv.sessions)
        row: dict[str, Any] = {"conversation": conv.id}
        for which in _rotated(names, n):
            space = f"enc-{tag}-{which}-{n}"
            load = machine.load_average()
            with batches_on(system.engine.embedder, encoders[which]):
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
        rows.append(row)
        print(f"ingest {conv.id}: {json.dumps(row)}", flush=True)
    turns = sum(r["turns"] for r in rows)
    total: dict[str, dict[str, float]] = {}
    for w in names:
        seconds = sum(r[w]["seconds"] for r in rows)
        cpu_s = sum(r[w]["cpu_s"] for r in rows)
        total[w] = {
            "seconds": round(seconds, 2),
            "cpu_s": round(cpu_s, 2),
            "messages_per_s": round(turns / seconds, 2),
        }
    for w in names:
        total[w]["speedup_wall"] = round(total[names[0]]["seconds"] / total[w]["seconds"], 2)
        total[w]["speedup_cpu"] = round(total[names[0]]["cpu_s"] / total[w]["cpu_s"], 2)
    return {"conversations": rows, "turns": turns, "total": total}


def run_markdown(run: dict[str, Any]) -> list[str]:
    """The side-by-side tables of one dataset's run."""
    enc = run["encoders"]
    loads = enc["load_average_1m"]
    lines = [
        f"## {run['dataset']}: {enc['texts']} texts, {enc['characters']:,} characters "
        f"(load average 1 min {min(loads):.1f}–{max(loads):.1f})",
        "",
        "| encoder | wall s | texts/s | chars/s | CPU s | × CPU | sentence cos min / median "
        "| token cos min |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for w, r in enc["encoders"].items():
        a = enc["agreement"].get(w)
        agree = (
            f"{a['sentence_cosine_min']} / {a['sentence_cosine_median']} | {a['token_cosine_min']}"
            if a
            else "(baseline) | "
        )
        lines.append(
            f"| {w} | {r['wall_s']} | {r['texts_per_s']} | {r['chars_per_s']:,} | {r['cpu_s']} "
            f"| {r['speedup_cpu']} | {agree} |"
        )
    lines.append("")
    ing = run.get("ingest")
    if ing:
        lines += [
            "| ingest | turns | seconds | msg/s | CPU s | × wall | × CPU | load 1m |",
            "|---|---|---|---|---|---|---|---|",
        ]
        base = enc["baseline"]
        for r in ing["conversations"]:
            for w in ing["total"]:
                c = r[w]
                wall_x = round(r[base]["seconds"] / c["seconds"], 2)
                cpu_x = round(r[base]["cpu_s"] / c["cpu_s"], 2)
                lines.append(
                    f"| {r['conversation']} {w} | {r['turns']} | {c['seconds']} | "
                    f"{c['messages_per_s']} | {c['cpu_s']} | {wall_x} | {cpu_x} | "
                    f"{c['load_average_1m']} |"
                )
        for w, t in ing["total"].items():
            lines.append(
                f"| total {w} | {ing['turns']} | {t['seconds']} | {t['messages_per_s']} | "
                f"{t['cpu_s']} | {t['speedup_wall']} | {t['speedup_cpu']} | |"
            )
        lines.append("")
    return lines


def markdown(result: dict[str, Any]) -> str:
    """Every dataset's tables, after the command and the commit."""
    lines = [
        f"# Document encoders side by side ({', '.join(result['encoders'])})",
        "",
        f"`{result['command']}` at {result['code']['commit'][:10]}.",
        "",
    ]
    for run in result["runs"]:
        lines += run_markdown(run)
    return "\n".join(lines)


def _load(dataset: str, path: str | None) -> Any:
    from benchmarks import beam, locomo

    if dataset == "beam":
        return beam.load(path)[0]
    return locomo.load(path)[0]


def dataset_run(
    system: Any, encoders: dict[str, Any], dataset: str, args: argparse.Namespace
) -> dict[str, Any]:
    """Both sections on the first ``--conversations`` of one dataset."""
    from benchmarks.perf_ingest import embedded_texts
    from benchmarks.sut import corpus_sessions

    convs = list(_load(dataset, args.path).conversations)[: args.conversations]
    embedder = system.engine.embedder
    texts = [t for c in convs for t in embedded_texts(system.ingestor, corpus_sessions(c.sessions))]
    if args.encoder_texts:
        texts = texts[: args.encoder_texts]
    for encoder in encoders.values():  # warm every path up
        with batches_on(embedder, encoder):
            embedder.encode_with_tokens(texts[:16])
    run: dict[str, Any] = {"dataset": f"{dataset}: first {len(convs)} conversations"}
    run["encoders"] = compare_encoders(embedder, encoders, texts, args.slice)
    print(json.dumps(run["encoders"]), flush=True)
    if not args.skip_ingest:
        run["ingest"] = compare_ingest(system, encoders, convs)
    return run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.encoders", description=__doc__)
    p.add_argument("--dataset", nargs="+", choices=["beam", "locomo"], default=["beam"])
    p.add_argument("--path", default=None, help="dataset path (one dataset; default: shared)")
    p.add_argument("--encoders", nargs="+", choices=ENCODERS, default=["torch", "onnx"])
    p.add_argument("--conversations", type=int, default=3, help="first N conversations")
    p.add_argument("--encoder-texts", type=int, default=0, help="at most N texts (0: all)")
    p.add_argument("--slice", type=int, default=64, help="texts per encode_with_tokens call")
    p.add_argument("--skip-ingest", action="store_true")
    p.add_argument("--neo4j-uri", default="bolt://127.0.0.1:7687")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/encoders.json"))
    args = p.parse_args(argv)
    if len(set(args.encoders)) < 2:
        p.error("--encoders needs two or more different encoders")

    from benchmarks.instance import start_engine
    from benchmarks.mnemograph import MnemographSystem
    from benchmarks.perf import warm_up_graph

    engine = start_engine(args.neo4j_uri)
    try:
        encoders = batch_encoders(engine.embedder, list(dict.fromkeys(args.encoders)))
        system = MnemographSystem(engine, progress=False)
        warm_up_graph(system)
        result: dict[str, Any] = {
            "name": args.out.stem,
            "kind": "encoders",
            "command": "python -m benchmarks.encoders " + " ".join(map(shlex.quote, sys.argv[1:])),
            "code": machine.code_version(),
            "machine": machine.machine(),
            "started": machine.now_iso(),
            "encoders": list(encoders),
            "document_encoder": engine.embedder.document_encoder_status.detail,
            "runs": [dataset_run(system, encoders, d, args) for d in args.dataset],
        }
        result["finished"] = machine.now_iso()
    finally:
        engine.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
