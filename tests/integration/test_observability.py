"""/metrics (request counts and latencies per route template, ingest, recalls by caller and
their steps, job runs and their duration histogram, GDS graphs, the driver's pool; optionally
behind a key) and the request id echoed in X-Request-ID, on the real app."""

from __future__ import annotations

import json
import logging

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app.main import create_app
from app.observability.collectors import JOB_BUCKETS, pool_state
from app.observability.middleware import JsonFormatter, request_id
from app.settings import Settings


def _metric(text: str, name: str, **labels: str) -> float:
    """The sum of the samples called ``name`` whose labels include ``labels``."""
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items())
    )


def test_metrics_and_request_ids(client, space):
    turn = {"role": "user", "speaker": "Ana", "content": "The build server is in Frankfurt."}
    body = {"session_id": "s1", "turns": [turn]}
    assert client.post(f"/v1/spaces/{space}/sessions", json=body).status_code == 201
    r = client.post(f"/v1/spaces/{space}/recall", json={"query": "build server"},
                    headers={"X-Request-ID": "abc-123"})  # fmt: skip
    assert r.status_code == 200 and r.headers["x-request-id"] == "abc-123"
    generated = client.get("/healthz").headers["x-request-id"]
    assert len(generated) == 32
    odd = client.get("/healthz", headers={"X-Request-ID": "bad id\twith spaces"})
    assert odd.headers["x-request-id"] != "bad id\twith spaces"
    assert client.post(f"/v1/spaces/{space}/jobs/decay", json={"dry_run": True}).status_code == 200
    ctx = {"query": "Where is the build server?", "context_window": 2000}
    assert client.post(f"/v1/spaces/{space}/context", json=ctx).status_code == 200

    text = client.get("/metrics").text
    route = "/v1/spaces/{space}/recall"
    assert _metric(text, "mnemograph_http_requests_total", route=route, method="POST",
                   status="200") >= 1  # fmt: skip
    assert _metric(text, "mnemograph_http_request_duration_seconds_count", route=route) >= 1
    assert space not in text  # labels are route templates, never paths
    assert _metric(text, "mnemograph_ingest_items_total", decision="stored") >= 1
    assert _metric(text, "mnemograph_recall_duration_seconds_count", caller="api") >= 1
    assert _metric(text, "mnemograph_recall_duration_seconds_count", caller="assembler") >= 1
    assert _metric(text, "mnemograph_recall_step_seconds_count", caller="assembler") >= 1
    assert _metric(text, "mnemograph_job_runs_total", job="decay", status="ok") >= 1
    runs = _metric(text, "mnemograph_job_duration_seconds_count", job="decay")
    assert runs >= 1
    top = _metric(text, "mnemograph_job_duration_seconds_bucket", job="decay", le="+Inf")
    assert top == runs  # the histogram's buckets are cumulative up to every run
    le = str(float(JOB_BUCKETS[-1]))
    assert _metric(text, "mnemograph_job_duration_seconds_bucket", job="decay", le=le) <= runs
    # GDS's catalog and Neo4j's heap are read at scrape time
    assert "mnemograph_gds_projections " in text
    assert _metric(text, "mnemograph_gds_projection_bytes") >= 0
    assert _metric(text, "mnemograph_neo4j_heap_max_bytes") > 0
    for reason in ("room", "idle"):  # this process's evictions
        assert f'mnemograph_gds_projections_evicted_total{{reason="{reason}"}}' in text
    # the driver's pool: the connections it holds, none left in use between requests
    assert _metric(text, "mnemograph_neo4j_pool_connections", state="idle") >= 1
    assert _metric(text, "mnemograph_neo4j_pool_max_connections") >= 1


def test_pool_state_reads_the_driver_or_gives_up(engine):
    in_use, idle, maximum = pool_state(engine.store.driver) or (-1, -1, -1)
    assert in_use >= 0 and idle >= 0 and maximum >= in_use + idle
    assert pool_state(object()) is None  # a driver laid out otherwise: no pool metrics


def test_metrics_can_require_a_key(engine):
    keys = "admin-key;limited-key:some-space"
    uri = engine.store.config.uri
    with TestClient(create_app(Settings(api_keys=keys, neo4j_uri=uri), engine=engine)) as c:
        assert c.get("/metrics").status_code == 200  # off by default
    settings = Settings(api_keys=keys, metrics_requires_key=True, neo4j_uri=uri)
    with TestClient(create_app(settings, engine=engine)) as c:
        r = c.get("/metrics")
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
        r = c.get("/metrics", headers={"Authorization": "Bearer limited-key"})
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
        r = c.get("/metrics", headers={"Authorization": "Bearer admin-key"})
        assert r.status_code == 200 and "mnemograph_http_requests_total" in r.text


def test_json_log_lines_carry_the_request_id():
    token = request_id.set("rid-1")
    try:
        record = logging.LogRecord("x", logging.INFO, __file__, 1, "hello %s", ("you",), None)
        record.http = {"status": 200}
        line = json.loads(JsonFormatter().format(record))
    finally:
        request_id.reset(token)
    assert line["message"] == "hello you" and line["request_id"] == "rid-1"
    assert line["http"] == {"status": 200} and line["level"] == "info"
