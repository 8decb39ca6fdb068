"""The recall configurations the benchmark reports side by side: the product's presets
(``full``, ``fast``, ``dense``) and the ablations built from the same steps, which the API
does not offer. The harness hands them to :meth:`pipelines.recall.service.Recaller.recall`
as preset objects."""

from __future__ import annotations

from pipelines.recall.config import DEFAULT_SIGNALS, SIGNAL_FULLTEXT
from pipelines.recall.presets import DENSE, FAST, FULL, RecallPreset
from pipelines.recall.steps.abstain import Abstain
from pipelines.recall.steps.candidates import Candidates, LexicalAhead
from pipelines.recall.steps.embed import Embed
from pipelines.recall.steps.embeddings import Embeddings
from pipelines.recall.steps.fuse import Fuse
from pipelines.recall.steps.order import Order
from pipelines.recall.steps.rerank import Rerank
from pipelines.recall.steps.touch import Touch
from pipelines.recall.steps.understand import Understand

FULLTEXT = RecallPreset(
    name="fulltext",
    description="Full-text (BM25) only, on an escaped Lucene query.",
    steps=(
        Understand(signals=(SIGNAL_FULLTEXT,), intent_profiles=False),
        LexicalAhead(),
        Embed(),
        Candidates(),
        Fuse(),
        Embeddings(),
        Order(),
        Abstain(),
        Touch(),
    ),
)
FUSED = RecallPreset(
    name="fused",
    description="Weighted RRF of vector, full-text, entity, heat and recency signals.",
    steps=(
        Understand(signals=DEFAULT_SIGNALS),
        LexicalAhead(),
        Embed(),
        Candidates(),
        Fuse(),
        Embeddings(),
        Order(),
        Abstain(),
        Touch(),
    ),
)
FUSED_RERANK = RecallPreset(
    name="fused_rerank",
    description="fused + reranker (cross-encoder if loaded, else the context reranker).",
    steps=(*FUSED.steps[:5], Rerank(), *FUSED.steps[5:]),
)

#: Every configuration, in report order: BM25 only, dense only, fused (RRF), fused + rerank,
#: full without late interaction (``fast``), full.
BENCH_PRESETS: dict[str, RecallPreset] = {
    p.name: p for p in (FULLTEXT, DENSE, FUSED, FUSED_RERANK, FAST, FULL)
}
