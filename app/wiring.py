"""Dependency getters: routers ask for the engine here, never build one."""

from __future__ import annotations

from fastapi import Request

from app.settings import Settings
from pipelines.engine import Engine, EngineSettings
from pipelines.graph import GraphConfig
from pipelines.ingest.service import Ingestor
from pipelines.models.reranker import RerankerSettings


def engine_settings(s: Settings) -> EngineSettings:
    return EngineSettings(
        graph=GraphConfig(
            uri=s.neo4j_uri, user=s.neo4j_user, password=s.neo4j_password, database=s.neo4j_database
        ),
        embedding_model_path=s.embedding_model_path,
        embedding_batch_size=s.embedding_batch_size,
        query_encoder=s.query_encoder,
        model_cache_dir=s.model_cache_dir,
        spacy_model=s.spacy_model,
        reranker=RerankerSettings(
            enabled=s.reranker_enabled,
            model_dir=s.reranker_model_dir,
            model_name=s.reranker_model_name,
            allow_download=s.reranker_allow_download,
        ),
    )


def get_engine(request: Request) -> Engine:
    return request.app.state.engine


def get_ingestor(request: Request) -> Ingestor:
    """One Ingestor per app (it holds the entity extractor built on the shared spaCy model)."""
    ingestor = getattr(request.app.state, "ingestor", None)
    if ingestor is None:
        ingestor = request.app.state.ingestor = Ingestor(request.app.state.engine)
    return ingestor
