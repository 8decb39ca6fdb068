"""The README's quickstart requests, sent as written (into a space of their own) to a live
server: each answers 2xx, and recall and context find the turn the session stored."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import httpx

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
CURL = re.compile(r"curl -s -XPOST localhost:8000(\S+) .*?-d '(.*?)'", re.S)


def _quickstart() -> list[tuple[str, dict[str, object]]]:
    """(path, body) of every curl request in the README's quickstart block."""
    block = README.split("A first conversation", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [(path, json.loads(body)) for path, body in CURL.findall(block)]


def test_readme_quickstart_requests_work(live):
    requests = _quickstart()
    assert [p.rsplit("/", 1)[-1] for p, _ in requests] == [
        "spaces",
        "sessions",
        "recall",
        "context",
    ]
    space = f"readme-{uuid.uuid4().hex[:8]}"
    answers = {}
    try:
        for path, body in requests:
            if path == "/v1/spaces":
                body = {**body, "id": space}
            r = httpx.post(
                f"{live.url}{path.replace('/demo/', f'/{space}/')}", json=body, timeout=60
            )
            assert r.status_code in (200, 201), (path, r.status_code, r.text)
            answers[path.rsplit("/", 1)[-1]] = r.json()
    finally:
        httpx.delete(f"{live.url}/v1/spaces/{space}", timeout=60)
    assert answers["spaces"]["id"] == space
    assert [i["decision"] for i in answers["sessions"]["items"]] == ["stored", "stored"]
    assert "Boston in May" in answers["recall"]["results"][0]["content"]
    assert answers["recall"]["results"][0]["explain"]["signals"]
    assert "Caroline: I moved to Boston in May." in answers["context"]["prompt"]
