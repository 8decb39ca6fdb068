"""The local runtime really is Neo4j 5.26 + GDS 2.13, and GDS algorithms run."""

from neo4j_runtime import runtime
from neo4j_runtime.settings import GDS_VERSION, NEO4J_VERSION, InstanceConfig


def test_smoke_proves_gds(neo4j_uri, neo4j_auth):
    info = runtime.smoke(neo4j_uri, neo4j_auth)
    assert info["neo4j_version"] == NEO4J_VERSION
    assert info["gds_version"] == GDS_VERSION
    assert info["gds_procedures"] >= 400  # OpenGDS 2.13 registers 434
    assert info["ppr_top_node"] == 2  # the hub of the 4-node probe graph
    assert info["leiden_communities"] >= 1


def test_start_is_idempotent(neo4j_uri, tmp_path):
    # A second start of a running instance reuses it instead of failing on the busy port.
    port = int(neo4j_uri.rsplit(":", 1)[1])
    inst = InstanceConfig(name="x", base_dir=tmp_path, bolt_port=port)
    assert runtime.port_open("127.0.0.1", port)
    try:
        runtime.start(inst, wait=False)
    except runtime.RuntimeErrorWithHint as exc:
        assert "already in use" in str(exc)  # another process (ours, elsewhere) holds the port
    else:
        raise AssertionError("a busy port must not be taken over silently")


def test_config_rendering(tmp_path):
    inst = InstanceConfig(name="t", base_dir=tmp_path, bolt_port=17999)
    home = tmp_path / "home"
    runtime.write_config(inst, home)
    conf = (inst.conf_dir / "neo4j.conf").read_text()
    assert "server.bolt.listen_address=127.0.0.1:17999" in conf
    assert "dbms.security.procedures.unrestricted=gds.*" in conf
    assert f"server.directories.data={inst.data_dir}" in conf
    cmd = runtime.java_command(inst, home, runtime.find_java())
    cp = cmd[cmd.index("-cp") + 1]
    # plugins must come first on the classpath so GDS registers its extensions
    assert cp.index("plugins") < cp.index("lib")
    assert "--add-opens=java.base/java.nio=ALL-UNNAMED" in cmd


def test_java_is_17_or_21():
    java = runtime.find_java()
    assert runtime._java_major(java) in (17, 21)
