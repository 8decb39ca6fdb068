"""The recall configurations the benchmark reports side by side: the product's presets
(``full``, ``fast``, ``dense``) and the ablations built from the same steps, which the API
does not offer. The harness hands them to :meth:`pipelines.recall.service.Recaller.recall`
as preset objects."""

from __future__ import annotations

from pipelines.recall.config import SIGNAL_FULLTEXT
from pipelines.recall.presets import DENSE, FAST, FULL, RecallPreset, simple_preset
from pipelines.recall.steps.rerank import Rerank

FULLTEXT = simple_preset(
    "fulltext",
    "Full-text (BM25) only, on an escaped Lucene query.",
    {"query": {"signals": [SIGNAL_FULLTEXT], "intent_profiles": False}},
)
FUSED = simple_preset(
    "fused",
    "Weighted RRF of vector, full-text, entity, heat and recency signals.",
    {},
)
FUSED_RERANK = simple_preset(
    "fused_rerank",
    "fused + reranker (cross-encoder if loaded, else the context reranker).",
    {},
    Rerank(),
)

FULL_NO_CHUNKS = FULL.without(
    "chunks",
    name="full_no_chunks",
    description="full without the chunk signals: a long memory found only by its own mean "
    "vector and whole text (the ablation of chunk recall; same as full where nothing is long).",
)

DENSE_NO_CHUNKS = DENSE.without(
    "chunks",
    name="dense_no_chunks",
    description="dense without the chunk signals: a long memory found only by its mean vector.",
)

#: Every configuration, in report order: BM25 only, dense only, fused (RRF), fused + rerank,
#: full without late interaction (``fast``), full.
BENCH_PRESETS: dict[str, RecallPreset] = {
    p.name: p
    for p in (FULLTEXT, DENSE, FUSED, FUSED_RERANK, FAST, FULL, FULL_NO_CHUNKS, DENSE_NO_CHUNKS)
}
