"""The local runtime's Browser and authentication settings, without starting Neo4j."""

from __future__ import annotations

import stat
from dataclasses import replace
from pathlib import Path

import pytest

from neo4j_runtime import auth, runtime
from neo4j_runtime import settings as S
from neo4j_runtime.__main__ import GUIDE_PATH, STYLE_PATH, api_base_url, dev_instance, dev_login

HOME = Path("/opt/neo4j-home")


def test_bolt_only_and_authenticated_by_default(tmp_path):
    inst = S.InstanceConfig(name="t", base_dir=tmp_path)
    values = inst.settings(HOME)
    assert values["server.http.enabled"] == "false"
    # on loopback too: the generated password, kept owner-only in the instance directory
    assert values["dbms.security.auth_enabled"] == "true"
    assert inst.auth == (S.NEO4J_USER, auth.password_path(tmp_path).read_text().strip())
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o700
    assert not any(k.startswith("browser.") for k in values)
    assert S.InstanceConfig(name="t", base_dir=tmp_path).browser_url is None


def test_browser_settings(tmp_path):
    inst = S.InstanceConfig(
        name="t",
        base_dir=tmp_path,
        bolt_port=7001,
        http_port=7002,
        guide_url="http://127.0.0.1:8000/browser/guide",
        style_url="http://127.0.0.1:8000/browser/style.grass",
    )
    values = inst.settings(HOME)
    assert values["server.http.enabled"] == "true"
    assert values["server.http.listen_address"] == "127.0.0.1:7002"
    # Browser connects to what the server advertises: the real ports, not 7687
    assert values["server.http.advertised_address"] == "127.0.0.1:7002"
    assert values["server.bolt.advertised_address"] == "127.0.0.1:7001"
    assert values["browser.post_connect_cmd"] == (
        "style http://127.0.0.1:8000/browser/style.grass; guide http://127.0.0.1:8000/browser/guide"
    )
    assert values["browser.remote_content_hostname_whitelist"] == "127.0.0.1"
    assert values["client.allow_telemetry"] == "false"
    assert inst.browser_url == "http://127.0.0.1:7002/browser/"  # the login form, no preset


def test_beyond_loopback_needs_authentication(tmp_path):
    open_wide = S.InstanceConfig(
        name="t", base_dir=tmp_path, host="0.0.0.0", extra={"dbms.security.auth_enabled": "false"}
    )
    assert open_wide.auth is None
    with pytest.raises(ValueError, match="without authentication"):
        open_wide.check()
    with pytest.raises(runtime.RuntimeErrorWithHint, match="without authentication"):
        runtime.start(open_wide, wait=False)
    with pytest.raises(ValueError, match="at least 8"):
        S.InstanceConfig(name="t", base_dir=tmp_path, host="0.0.0.0", password="short").check()
    with pytest.raises(ValueError, match="at least 8"):
        S.InstanceConfig(name="t", base_dir=tmp_path, password="").check()  # loopback as well
    secured = S.InstanceConfig(
        name="t", base_dir=tmp_path, host="0.0.0.0", http_port=7474, password="long enough"
    )
    secured.check()
    values = secured.settings(HOME)
    assert values["dbms.security.auth_enabled"] == "true"
    assert values["server.bolt.listen_address"] == "0.0.0.0:7687"
    assert values["server.bolt.advertised_address"] == "localhost:7687"
    assert secured.bolt_uri == "bolt://127.0.0.1:7687"  # local clients do not dial 0.0.0.0
    assert secured.auth == (S.NEO4J_USER, "long enough")
    assert secured.browser_url == "http://localhost:7474/browser/"  # a login form, no preset
    assert "long enough" not in repr(secured)
    S.InstanceConfig(name="t", base_dir=tmp_path, host="127.0.0.1").check()  # loopback: fine
    loopback_open = replace(open_wide, host="127.0.0.1")
    loopback_open.check()  # what tests do to recreate a database of before auth was always on
    assert loopback_open.browser_url is None and loopback_open.auth is None


def test_classpath_has_browser_last(tmp_path):
    cmd = runtime.java_command(S.InstanceConfig(name="t", base_dir=tmp_path), HOME, Path("java"))
    cp = cmd[cmd.index("-cp") + 1].split(":")
    assert cp == [f"{HOME}/plugins/*", f"{HOME}/lib/*", f"{HOME}/{runtime.BROWSER_DIR}/*"]


def test_generated_password_is_owner_only_and_stable(tmp_path):
    first = auth.stored_password(tmp_path / "inst")
    path = auth.password_path(tmp_path / "inst")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first) >= 24 and auth.stored_password(tmp_path / "inst") == first
    path.chmod(0o644)  # loosened by someone: tightened again on the next read
    assert auth.stored_password(tmp_path / "inst") == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_dev_instance_from_the_environment(tmp_path, monkeypatch):
    for var in ("PASSWORD", "LISTEN", "HTTP_PORT", "ADVERTISED_HOST", "PORT"):
        monkeypatch.delenv(f"MNEMOGRAPH_NEO4J_{var}", raising=False)
    monkeypatch.setenv("MNEMOGRAPH_NEO4J_DIR", str(tmp_path))
    monkeypatch.setenv("MNEMOGRAPH_PORT", "8123")
    monkeypatch.delenv("MNEMOGRAPH_HOST", raising=False)
    local = dev_instance()
    assert local.host == "127.0.0.1" and local.http_port == 7474
    # loopback too: a generated password, stored owner-only
    assert local.password == auth.password_path(tmp_path).read_text().strip()
    assert local.guide_url == "http://127.0.0.1:8123" + GUIDE_PATH
    assert local.style_url == "http://127.0.0.1:8123" + STYLE_PATH
    assert dev_instance("http://10.0.0.5:9000/").guide_url == "http://10.0.0.5:9000" + GUIDE_PATH
    monkeypatch.setenv("MNEMOGRAPH_NEO4J_HTTP_PORT", "off")
    assert dev_instance().http_port is None
    monkeypatch.setenv("MNEMOGRAPH_NEO4J_LISTEN", "0.0.0.0")
    assert dev_instance().password == local.password  # the same one beyond loopback
    monkeypatch.setenv("MNEMOGRAPH_NEO4J_PASSWORD", "operator-chosen")
    assert dev_instance().password == "operator-chosen"


def test_api_base_url():
    assert api_base_url("127.0.0.1", 8000) == "http://127.0.0.1:8000"
    assert api_base_url("0.0.0.0", 8000, public_host="memory.example") == (
        "http://memory.example:8000"
    )
    assert api_base_url("::1", 8000) == "http://[::1]:8000"


def test_instance_directories_are_owner_only(tmp_path):
    base = tmp_path / "inst"
    base.mkdir(mode=0o755)
    inst = S.InstanceConfig(name="t", base_dir=base)
    runtime.write_config(inst, HOME)
    for d in (base, inst.data_dir, inst.logs_dir, inst.run_dir, inst.conf_dir):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
    assert stat.S_IMODE(auth.password_path(base).stat().st_mode) == 0o600


def test_dev_login_reads_the_dev_instances_password(tmp_path, monkeypatch):
    for var in ("PASSWORD", "LISTEN", "PORT"):
        monkeypatch.delenv(f"MNEMOGRAPH_NEO4J_{var}", raising=False)
    monkeypatch.setenv("MNEMOGRAPH_NEO4J_DIR", str(tmp_path / "dev"))
    assert dev_login("bolt://127.0.0.1:7687") is None  # no instance yet: nothing is created
    assert not (tmp_path / "dev").exists()
    inst = dev_instance()
    assert dev_login("bolt://127.0.0.1:7687") == inst.auth
    assert dev_login("bolt://localhost:7687") == inst.auth
    assert dev_login("bolt://127.0.0.1:7799") is None  # another server: its own credentials
    monkeypatch.setenv("MNEMOGRAPH_NEO4J_PASSWORD", "operator-chosen")
    assert dev_login("bolt://127.0.0.1:7687") == (S.NEO4J_USER, "operator-chosen")
