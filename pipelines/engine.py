"""The composition root of the domain: graph store, models and configuration in one object.

The HTTP app, the CLI, the scheduler and the benchmarks all build one :class:`Engine` and hand
it to the domain services; nothing in ``pipelines`` imports from ``app``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import graph_schema
from pipelines import schema_data
from pipelines.access_log import AccessLog
from pipelines.graph import GraphConfig, GraphStore
from pipelines.models import ModelStatus
from pipelines.models.batching import DEFAULT_BATCH_PIECES
from pipelines.models.embeddings import Embedder, load_embedder
from pipelines.models.nlp import DEFAULT_SPACY_MODEL, load_nlp
from pipelines.models.reranker import FlashRankReranker, RerankerSettings, load_reranker
from pipelines.models.token_cache import TokenCache

log = logging.getLogger("mnemograph.engine")


class _Worker(Protocol):
    def close(self) -> None: ...


@dataclass(frozen=True)
class EngineSettings:
    graph: GraphConfig = field(default_factory=GraphConfig)
    embedding_model_path: str | None = None
    embedding_batch_size: int = 64
    #: padded word pieces per batch when ingest embeds (pipelines.models.batching)
    embedding_batch_pieces: int = DEFAULT_BATCH_PIECES
    query_encoder: str = "onnx"  # "onnx" | "torch": see pipelines.models.query_encoder
    document_encoder: str = "onnx"  # "onnx" | "torch" | "bf16": pipelines.models.embeddings
    model_cache_dir: str | None = None  # None: ~/.cache/mnemograph
    spacy_model: str = DEFAULT_SPACY_MODEL
    reranker: RerankerSettings = field(default_factory=RerankerSettings)
    #: late-interaction token vectors kept in process (pipelines.models.token_cache)
    token_cache_mb: int = 64


@dataclass
class Models:
    embedder: Embedder
    nlp: Any
    reranker: FlashRankReranker | None
    statuses: list[ModelStatus]


def load_models(settings: EngineSettings) -> Models:
    """Load every model and report each one (a required model that fails raises)."""
    embedder, s_emb = load_embedder(
        settings.embedding_model_path,
        settings.embedding_batch_size,
        batch_pieces=settings.embedding_batch_pieces,
        query_encoder=settings.query_encoder,
        document_encoder=settings.document_encoder,
        cache_dir=settings.model_cache_dir,
    )
    nlp, s_nlp = load_nlp(settings.spacy_model)
    reranker, s_rr = load_reranker(settings.reranker)
    statuses = [s_emb, s_nlp, s_rr]
    for s in statuses:
        log.info("model %s ready=%s (%s) in %.1fs", s.name, s.ready, s.detail, s.load_seconds)
    failed = [s for s in statuses if s.required and not s.ready]
    if failed:
        raise RuntimeError(
            "required models failed to load: " + "; ".join(f"{s.name}: {s.detail}" for s in failed)
        )
    return Models(embedder, nlp, reranker, statuses)


class Engine:
    def __init__(
        self, store: GraphStore, models: Models, token_cache_bytes: int = 64 * 2**20
    ) -> None:
        self.store = store
        self.models = models
        self.token_cache = TokenCache(token_cache_bytes)
        #: recall's accesses (heat, access count), written behind the read path
        self.access = AccessLog(store)
        #: background workers the domain starts on this engine (closed with it)
        self.workers: dict[str, _Worker] = {}
        self.migrations: graph_schema.MigrationReport | None = None
        self._gds: Any = None
        self.started_at = time.time()

    @property
    def embedder(self) -> Embedder:
        return self.models.embedder

    @property
    def nlp(self) -> Any:
        return self.models.nlp

    @property
    def gds(self) -> Any:
        """The official ``graphdatascience`` client on the same driver (algorithm calls go
        through it; projections are named Cypher statements)."""
        if self._gds is None:
            from graphdatascience import GraphDataScience

            self._gds = GraphDataScience(
                self.store.driver, database=self.store.config.database, show_progress=False
            )
        return self._gds

    @classmethod
    def start(cls, settings: EngineSettings, models: Models | None = None) -> Engine:
        """Connect, load models (unless given), apply schema migrations, verify dimensions."""
        store = GraphStore(settings.graph)
        try:
            store.verify()
            models = models or load_models(settings)
            engine = cls(store, models, settings.token_cache_mb * 2**20)
            if not settings.graph.read_only:  # a read-only store serves the schema as it is
                engine.migrations = graph_schema.apply(
                    store, models.embedder.dimensions, schema_data.DATA_STEPS
                )
        except BaseException:
            store.close()
            raise
        return engine

    def close(self) -> None:
        for worker in self.workers.values():
            worker.close()
        self.access.close()
        self.store.close()

    def _gds_client_version(self) -> str | None:
        try:
            from graphdatascience import __version__

            return f"graphdatascience {__version__} (server {self.gds.server_version()})"
        except Exception as exc:
            return f"unavailable: {exc}"

    def readiness(self) -> dict[str, Any]:
        """What /readyz reports: server versions, index states, model statuses."""
        out: dict[str, Any] = {
            "ready": False,
            "models": [s.as_dict() for s in self.models.statuses],
        }
        try:
            versions = self.store.read("schema/server_versions")[0]
            indexes = self.store.read("schema/index_states")
        except Exception as exc:
            out["neo4j"] = {"reachable": False, "error": str(exc)}
            return out
        out["neo4j"] = {"reachable": True, "version": versions["neo4j"]}
        out["gds"] = {"version": versions["gds"], "client": self._gds_client_version()}
        out["indexes"] = [
            {k: i[k] for k in ("name", "type", "state", "populationPercent")} for i in indexes
        ]
        indexes_online = all(i["state"] == "ONLINE" for i in indexes)
        models_ok = all(s.ready for s in self.models.statuses if s.required)
        out["reranker_active"] = self.models.reranker is not None
        out["ready"] = bool(indexes_online and models_ok)
        return out
