"""The composition root of the HTTP app: every service the routers use, built once when the app
starts (the FastAPI lifespan) and closed when it stops, thread pools included.

Routers receive the one :class:`Services` object through :data:`ServicesDep` and take what
they need from it; nothing is built lazily per request and nothing else holds a service.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from app.settings import Settings
from pipelines import language
from pipelines.assemble.service import Assembler
from pipelines.consolidate.scheduler import Scheduler
from pipelines.engine import Engine, EngineSettings
from pipelines.errors import Unavailable
from pipelines.graph import GraphConfig
from pipelines.ingest.config import DEFAULT_INGEST_CONFIG, IngestConfig
from pipelines.ingest.service import Ingestor
from pipelines.models.embeddings import Embedder
from pipelines.models.reranker import RerankerSettings
from pipelines.recall.service import Recaller

log = logging.getLogger("mnemograph.app")

#: Threads of each read-path pool: recall's concurrent signal reads, the assembler's reads
#: ahead of the step that needs them. Bounded; tasks never submit tasks, so a busy pool queues.
READ_POOL_THREADS = 8


def engine_settings(s: Settings) -> EngineSettings:
    """The domain's settings from the server's."""
    return EngineSettings(
        graph=GraphConfig(
            uri=s.neo4j_uri,
            user=s.neo4j_user,
            password=s.neo4j_password,
            database=s.neo4j_database,
            plan_warmup_budget_s=s.neo4j_warmup_seconds,
        ),
        embedding_model_path=s.embedding_model_path,
        embedding_batch_size=s.embedding_batch_size,
        embedding_batch_pieces=s.embedding_batch_pieces,
        query_encoder=s.query_encoder,
        document_encoder=s.document_encoder,
        model_cache_dir=s.model_cache_dir,
        spacy_model=s.spacy_model,
        token_cache_mb=s.token_cache_mb,
        reranker=RerankerSettings(
            enabled=s.reranker_enabled,
            model_dir=s.reranker_model_dir,
            model_name=s.reranker_model_name,
            allow_download=s.reranker_allow_download,
        ),
    )


def ingest_config(s: Settings) -> IngestConfig:
    """The write path's configuration with the server's work limit."""
    return DEFAULT_INGEST_CONFIG.model_copy(
        update={"max_embedding_inputs": s.ingest_max_embedding_inputs}
    )


@dataclass
class Services:
    """Everything the routers use. Built by :func:`build_services`; :meth:`close` releases it
    all in reverse order (the engine only when the services started it)."""

    settings: Settings
    engine: Engine
    embedder: Embedder
    ingestor: Ingestor
    recaller: Recaller
    assembler: Assembler
    recall_pool: ThreadPoolExecutor
    assembly_pool: ThreadPoolExecutor
    scheduler: Scheduler | None = None
    owns_engine: bool = False
    closed: bool = field(default=False, init=False)

    @property
    def pools(self) -> tuple[ThreadPoolExecutor, ...]:
        return (self.recall_pool, self.assembly_pool)

    def close(self) -> None:
        """Stop the scheduler (it finishes the job in progress), shut the pools down after
        their queued tasks, then close the engine if the services started it. Idempotent."""
        if self.closed:
            return
        self.closed = True
        if self.scheduler is not None:
            self.scheduler.stop()
        for pool in self.pools:
            pool.shutdown(wait=True)
        if self.owns_engine:
            self.engine.close()


def build_services(settings: Settings, engine: Engine | None = None) -> Services:
    """Build every service once. With ``engine`` given (tests, benchmarks) it is used and not
    closed; otherwise one is started (Neo4j, models, migrations) and closed with the rest."""
    owns_engine = engine is None
    language.configure(settings.language_rules)
    engine = engine or Engine.start(engine_settings(settings))
    recall_pool = ThreadPoolExecutor(READ_POOL_THREADS, thread_name_prefix="recall-signals")
    assembly_pool = ThreadPoolExecutor(READ_POOL_THREADS, thread_name_prefix="assemble")
    try:
        services = Services(
            settings=settings,
            engine=engine,
            embedder=engine.embedder,
            ingestor=Ingestor(engine, ingest_config(settings)),
            recaller=Recaller(engine, executor=recall_pool),
            assembler=Assembler(engine, read_ahead=assembly_pool, recall_executor=recall_pool),
            recall_pool=recall_pool,
            assembly_pool=assembly_pool,
            owns_engine=owns_engine,
        )
    except BaseException:
        for pool in (recall_pool, assembly_pool):
            pool.shutdown(wait=False)
        if owns_engine:
            engine.close()
        raise
    if settings.scheduler_enabled:
        services.scheduler = Scheduler(engine, intervals=settings.scheduler_intervals)
        services.scheduler.start()
    return services


def get_services(request: Request) -> Services:
    """The app's services; 503 while the app is starting or after it stopped."""
    services = request.app.state.services  # None until the lifespan has built them
    if not isinstance(services, Services) or services.closed:
        raise Unavailable("the service is starting or stopping; retry shortly")
    return services


ServicesDep = Annotated[Services, Depends(get_services)]
