"""/metrics (request counts and latencies per route template, ingest, recall steps, job
runs) and the request id echoed in X-Request-ID, on the real app."""

from __future__ import annotations

import json
import logging

from prometheus_client.parser import text_string_to_metric_families

from app.observability.middleware import JsonFormatter, request_id


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

    text = client.get("/metrics").text
    route = "/v1/spaces/{space}/recall"
    assert _metric(text, "mnemograph_http_requests_total", route=route, method="POST",
                   status="200") >= 1  # fmt: skip
    assert _metric(text, "mnemograph_http_request_duration_seconds_count", route=route) >= 1
    assert space not in text  # labels are route templates, never paths
    assert _metric(text, "mnemograph_ingest_items_total", decision="stored") >= 1
    assert _metric(text, "mnemograph_recall_step_seconds_count") >= 1
    assert _metric(text, "mnemograph_job_runs_total", job="decay", status="ok") >= 1
    assert _metric(text, "mnemograph_job_duration_seconds_count", job="decay") >= 1


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
