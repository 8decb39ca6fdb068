"""A bounded, seeded fuzzing run of the OpenAPI spec with schemathesis (``make fuzz``).

    python -m benchmarks fuzz [--max-examples 25] [--seed 1] [--phases examples,coverage,fuzzing]

Set-up: a fresh Neo4j and the API as separate processes on 127.0.0.1 (:mod:`benchmarks.served`),
a space ``fuzz`` holding one short session (so reads, jobs and deletions reach real data).
schemathesis (pinned in requirements.lock) reads ``/openapi.json`` and runs every operation:
``--max-examples`` cases per operation and phase, ``--seed`` fixed, no example database (a rerun
generates the same cases). The ``space`` path parameter is ``fuzz`` everywhere except for
``DELETE /v1/spaces/{space}``, which gets ``fuzz-doomed`` (so the fuzzed space survives the run).

Checks: every check schemathesis has (``--checks all``). The bars: 0 server errors, 0 response
schema violations, 0 schema-valid requests rejected (ST202), 0 undocumented statuses (ST103) and
0 schema-violating requests accepted (ST201);
every other failure kind is counted beside them. Results: ``benchmarks/results/<name>.{json,md}``
with schemathesis's own JSON report and its terminal output under ``<data dir>/``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks import campaign
from benchmarks.served import (
    ApiProcess,
    call,
    check_loopback,
)

SPACE = "fuzz"
DOOMED = "fuzz-doomed"
#: schemathesis failure types behind the two bars (``schemathesis.failure_codes``)
SERVER_ERROR_TYPES = ("ServerError", "ContentTypeServerError")
SCHEMA_VIOLATION_TYPES = ("JsonSchemaError", "MalformedJson")
REJECTED_VALID_TYPES = ("RejectedPositiveData",)  # ST202
UNDOCUMENTED_STATUS_TYPES = ("UndefinedStatusCode",)  # ST103
ACCEPTED_INVALID_TYPES = ("AcceptedNegativeData",)  # ST201

CONFIG = f"""# Written by python -m benchmarks fuzz for one run.
# No crash cache: a rerun with the same seed generates the same cases, nothing replayed.
[cache]
enabled = false

[parameters]
"path.space" = "{SPACE}"

[[operations]]
include-path = "/v1/spaces/{{space}}"
include-method = "DELETE"
parameters = {{ "path.space" = "{DOOMED}" }}
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    campaign.add_common(p, "fuzz", neo4j_port=7700, api_port=8700)
    p.add_argument("--max-examples", type=int, default=25, help="cases per operation and phase")
    p.add_argument("--phases", default="examples,coverage,fuzzing")
    p.add_argument("--workers", type=int, default=1, help="schemathesis workers")
    p.add_argument("--request-timeout", type=float, default=60.0)
    p.add_argument("--max-time", type=int, default=None, help="time budget of the run, s")


def _seed_space(api: ApiProcess) -> None:
    body = {
        "session_id": "fuzz-s0",
        "turns": [
            {"id": "fuzz-t0", "role": "user", "speaker": "Ann", "content": "I moved to Lisbon."},
            {"id": "fuzz-t1", "role": "assistant", "content": "Lisbon is lovely in spring."},
        ],
    }
    with httpx.Client(base_url=api.base_url, timeout=120.0) as client:
        for space in (SPACE, DOOMED):
            call(client, "POST", "/v1/spaces", {"id": space})
        out = call(client, "POST", f"/v1/spaces/{SPACE}/sessions", body)
    if out.status != 201:
        raise SystemExit(f"could not seed the fuzz space: {out.status} {out.body}")


def run_schemathesis(args: argparse.Namespace, api: ApiProcess, work: Path) -> dict[str, Any]:
    check_loopback(api.base_url)
    config = work / "schemathesis.toml"
    config.write_text(CONFIG)
    report = work / "schemathesis-report.json"
    st = Path(sys.executable).parent / "st"
    cmd = [
        str(st),
        "--config-file",
        str(config),
        "run",
        f"{api.base_url}/openapi.json",
        "--checks",
        "all",
        "--max-examples",
        str(args.max_examples),
        "--seed",
        str(args.seed),
        "--phases",
        args.phases,
        "--workers",
        str(args.workers),
        "--request-timeout",
        str(args.request_timeout),
        "--generation-database",
        "none",
        "--continue-on-failure",
        "--report",
        "json",
        "--report-json-path",
        str(report),
        "--no-color",
    ]
    if args.max_time:
        cmd += ["--max-time", str(args.max_time)]
    t0 = time.monotonic()
    log = work / "schemathesis.log"
    with open(log, "wb") as out:
        proc = subprocess.run(cmd, cwd=work, stdout=out, stderr=subprocess.STDOUT, check=False)
    doc: dict[str, Any] = json.loads(report.read_text()) if report.exists() else {}
    return {
        "seconds": round(time.monotonic() - t0, 1),
        "exit_code": proc.returncode,
        "command": " ".join(cmd[1:]),
        "log": str(log),
        "report": doc,
    }


def summarise(report: dict[str, Any]) -> dict[str, Any]:
    failures = report.get("failures") or []
    by_type: dict[str, int] = {}
    for f in failures:
        by_type[str(f.get("type"))] = by_type.get(str(f.get("type")), 0) + int(f.get("count", 0))
    server = sum(by_type.get(t, 0) for t in SERVER_ERROR_TYPES)
    schema = sum(by_type.get(t, 0) for t in SCHEMA_VIOLATION_TYPES)
    rejected = sum(by_type.get(t, 0) for t in REJECTED_VALID_TYPES)
    undocumented = sum(by_type.get(t, 0) for t in UNDOCUMENTED_STATUS_TYPES)
    accepted = sum(by_type.get(t, 0) for t in ACCEPTED_INVALID_TYPES)
    return {
        "test_cases": report.get("test_cases"),
        "operations": report.get("operations"),
        "failures_by_type": by_type,
        "server_errors": server,
        "response_schema_violations": schema,
        "schema_valid_rejected": rejected,
        "undocumented_statuses": undocumented,
        "schema_invalid_accepted": accepted,
        "errors": report.get("errors"),
        "complete": report.get("complete"),
        "bars": {
            "0 server errors": bool(report) and server == 0,
            "0 response-schema violations": bool(report) and schema == 0,
            "0 schema-valid requests rejected (ST202)": bool(report) and rejected == 0,
            "0 undocumented statuses (ST103)": bool(report) and undocumented == 0,
            "0 schema-violating requests accepted (ST201)": bool(report) and accepted == 0,
        },
    }


def markdown(result: dict[str, Any]) -> str:
    s = result["summary"]
    out = [f"# Benchmark `{result['name']}` (schemathesis over the OpenAPI spec)", ""]
    out += campaign.header_lines(result)
    st = result["schemathesis"]
    out += [
        f"- schemathesis {st['report'].get('schemathesis_version')}: `st {st['command']}` "
        f"({st['seconds']} s, exit code {st['exit_code']})",
        f"- operations {s['operations']}; test cases {s['test_cases']}",
        "",
        *campaign.bars_table(s["bars"]),
    ]
    out += [
        "",
        f"Server errors: {s['server_errors']}; response-schema violations: "
        f"{s['response_schema_violations']} (schemathesis counts unique failures: one per "
        "operation and cause, not every response).",
        "",
        "## Failures by kind",
        "",
        "| kind | title | count | operations |",
        "|---|---|---|---|",
    ]
    for f in st["report"].get("failures") or []:
        ops = ", ".join(f.get("operations") or [])
        out.append(f"| {f.get('type')} | {f.get('title')} | {f.get('count')} | {ops} |")
    if s["errors"]:
        out += ["", f"Errors (the tool could not test): {s['errors']}"]
    return "\n".join(out) + "\n"


def main(args: argparse.Namespace) -> int:
    with campaign.served(args, "fuzz") as srv:
        _seed_space(srv.api)
        print("fuzz: schemathesis …", flush=True)
        st = run_schemathesis(args, srv.api, srv.base)
    result = campaign.finish(
        args, srv, "fuzz", {"schemathesis": st, "summary": summarise(st["report"])}
    )
    files = campaign.write(result, markdown(result), args.out_dir)
    print(f"wrote {files['json']} and {files['md']}")
    print(result["summary"]["bars"], result["summary"]["failures_by_type"])
    return 0
