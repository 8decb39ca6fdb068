"""docker-compose.yml uses the same Neo4j version and settings as the local runtime."""

import re
from pathlib import Path

import yaml

from neo4j_runtime.__main__ import GUIDE_PATH, STYLE_PATH
from neo4j_runtime.settings import NEO4J_VERSION, SHARED_SETTINGS, browser_settings

COMPOSE = (Path(__file__).resolve().parents[2] / "docker-compose.yml").read_text()
SPEC = yaml.safe_load(COMPOSE)


def env_name(setting: str) -> str:
    # Neo4j's Docker convention: '_' becomes '__', then '.' becomes '_'
    return "NEO4J_" + setting.replace("_", "__").replace(".", "_")


def test_same_version():
    assert re.search(rf"image:\s*neo4j:{re.escape(NEO4J_VERSION)}-community", COMPOSE)


def test_same_settings():
    for key, value in SHARED_SETTINGS.items():
        assert re.search(rf'{re.escape(env_name(key))}:\s*"{re.escape(value)}"', COMPOSE), key


def test_browser_opens_the_guide_like_the_local_runtime():
    api = "http://127.0.0.1:8000"  # the API's published port
    expected = browser_settings(api + GUIDE_PATH, api + STYLE_PATH)
    env = SPEC["services"]["neo4j"]["environment"]
    for key, value in expected.items():
        assert env[env_name(key)] == value, key
    assert "127.0.0.1:7474:7474" in SPEC["services"]["neo4j"]["ports"]


def test_gds_plugin_and_api_keys_required():
    assert "graph-data-science" in COMPOSE
    assert "MNEMOGRAPH_API_KEYS:?" in COMPOSE


def test_neo4j_auth_on_with_the_operators_password():
    """Inside Docker Neo4j listens beyond loopback: authentication on, the API logs in."""
    neo4j_env = SPEC["services"]["neo4j"]["environment"]
    assert neo4j_env["NEO4J_AUTH"].startswith("neo4j/${MNEMOGRAPH_NEO4J_PASSWORD:?")
    api_env = SPEC["services"]["api"]["environment"]
    assert api_env["MNEMOGRAPH_NEO4J_USER"] == "neo4j"
    assert api_env["MNEMOGRAPH_NEO4J_PASSWORD"].startswith("${MNEMOGRAPH_NEO4J_PASSWORD:?")
    assert "-p" in " ".join(SPEC["services"]["neo4j"]["healthcheck"]["test"])


def test_compose_structure():
    """What `docker compose config` would check first: services, healthchecks, volumes."""
    services = SPEC["services"]
    assert set(services) == {"neo4j", "api"}
    assert services["api"]["depends_on"]["neo4j"]["condition"] == "service_healthy"
    for svc in services.values():
        assert svc["healthcheck"]["test"]
    assert set(SPEC["volumes"]) == {"neo4j-data", "neo4j-plugins"}
    for port in services["neo4j"]["ports"] + services["api"]["ports"]:
        assert port.startswith("127.0.0.1:")  # nothing published beyond loopback by default
