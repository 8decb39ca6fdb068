"""docker-compose.yml uses the same Neo4j version and settings as the local runtime."""

import re
from pathlib import Path

from neo4j_runtime.settings import NEO4J_VERSION, SHARED_SETTINGS

COMPOSE = (Path(__file__).resolve().parents[2] / "docker-compose.yml").read_text()


def env_name(setting: str) -> str:
    # Neo4j's Docker convention: '_' becomes '__', then '.' becomes '_'
    return "NEO4J_" + setting.replace("_", "__").replace(".", "_")


def test_same_version():
    assert re.search(rf"image:\s*neo4j:{re.escape(NEO4J_VERSION)}-community", COMPOSE)


def test_same_settings():
    for key, value in SHARED_SETTINGS.items():
        assert re.search(rf'{re.escape(env_name(key))}:\s*"{re.escape(value)}"', COMPOSE), key


def test_gds_plugin_and_api_keys_required():
    assert "graph-data-science" in COMPOSE
    assert "MNEMOGRAPH_API_KEYS:?" in COMPOSE
