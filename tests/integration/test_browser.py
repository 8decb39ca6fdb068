"""Neo4j Browser without a browser: the test Neo4j serves Browser's page, the API serves the
guide and the style (with CORS, since Browser fetches them from its own origin), /readyz says
where Browser is, and every guide query runs against a demo space ingested through the API:
rows for each, graphs for graph queries, no vectors in tables, nothing from another space."""

from __future__ import annotations

import html
import uuid

import httpx
import neo4j.graph
import pytest
from neo4j import GraphDatabase

from benchmarks.browser_demo import ingest_demo
from pipelines import browser
from tests.cypher import LIBRARY


@pytest.fixture(scope="module")
def demo(client):
    space = f"browser-{uuid.uuid4().hex[:8]}"
    report = ingest_demo(client, space, jobs=("merge", "supersede"))  # what the guide reads
    assert report["jobs"]["merge"]["merged"] >= 1, report
    assert report["jobs"]["supersede"]["superseded_memory"] >= 1, report
    yield space
    client.delete(f"/v1/spaces/{space}")


@pytest.fixture(scope="module")
def driver(neo4j_uri, neo4j_auth):
    with GraphDatabase.driver(neo4j_uri, auth=neo4j_auth) as d:
        yield d


def _run(driver, statement, params):
    return driver.execute_query(statement, params, database_="neo4j").records


def test_readyz_reports_browser_and_neo4j_serves_it(client, neo4j_uri, neo4j_auth):
    ready = client.get("/readyz").json()["browser"]
    # the session's own Neo4j asks for a password, as every local instance does
    assert ready["available"] is True and ready["auth"] is (neo4j_auth is not None)
    assert ready["bolt"] == neo4j_uri  # the advertised Bolt address is the real one
    login = "/browser/" if neo4j_auth else "/browser/?preselectAuthMethod=NO_AUTH"
    assert ready["url"].endswith(login)
    page = httpx.get(ready["url"], timeout=30)
    assert page.status_code == 200 and "<title>Neo4j Browser</title>" in page.text
    discovery = httpx.get(ready["url"].split("/browser/")[0] + "/", timeout=30).json()
    assert discovery["bolt_direct"] == neo4j_uri


def test_guide_and_style_are_served_cross_origin(client):
    guide = client.get("/browser/guide")
    assert guide.status_code == 200 and guide.headers["content-type"].startswith("text/html")
    assert guide.headers["access-control-allow-origin"] == "*"
    assert guide.text == browser.guide_html()
    for q in browser.queries():
        assert html.escape(q.title) in guide.text
    preflight = client.options(
        "/browser/guide",
        headers={"Origin": "http://127.0.0.1:7474", "Access-Control-Request-Method": "GET"},
    )
    assert preflight.status_code == 204
    assert "pragma" in preflight.headers["access-control-allow-headers"]  # Browser sends it
    style = client.get("/browser/style.grass")
    assert style.status_code == 200 and style.text == browser.style_grass()
    assert style.headers["access-control-allow-origin"] == "*"


def _values(value):
    """Every value inside a result value (lists and maps opened)."""
    yield value
    if isinstance(value, list):
        for v in value:
            yield from _values(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _values(v)


def test_every_guide_query_returns_rows_on_the_demo_space(driver, demo):
    params = browser.default_params(demo)
    for q in browser.queries():
        records = _run(driver, q.statement, params)
        assert records, f"{q.name} returned no rows"
        values = [v for r in records for item in r.values() for v in _values(item)]
        entities = [v for v in values if isinstance(v, neo4j.graph.Node | neo4j.graph.Relationship)]
        if q.view == "graph":
            nodes = [v for v in entities if isinstance(v, neo4j.graph.Node)]
            assert nodes, f"{q.name} draws no graph"
            assert {n["space"] for n in nodes} == {demo}, q.name
        else:
            assert not entities, f"{q.name} puts nodes in a table"
            lists = [v for v in values if isinstance(v, list | bytes)]
            assert all(len(v) < 64 for v in lists), f"{q.name} returns a vector"


def test_optional_parameters_pick_what_was_asked(driver, demo):
    stages = _run(driver, browser.queries()[1].statement, browser.default_params(demo))
    first = stages[0]["stage"]
    stage_graph = next(q for q in browser.queries() if q.name.endswith("stage_graph"))
    records = _run(driver, stage_graph.statement, {**browser.default_params(demo), "stage": first})
    assert {r["st"]["id"] for r in records} == {first}
    timeline = next(q for q in browser.queries() if q.name.endswith("entity_timeline"))
    by_name = _run(driver, timeline.statement, {**browser.default_params(demo), "entity": "berlin"})
    assert by_name and {r["entity"] for r in by_name} == {"Berlin"}


def test_guide_queries_stay_in_their_space(driver, demo, client):
    other = f"browser-empty-{uuid.uuid4().hex[:8]}"
    assert client.post("/v1/spaces", json={"id": other}).status_code == 201
    try:
        for q in browser.queries():
            if q.name.endswith("01_spaces"):
                continue  # the one query over all spaces: it lists them
            records = _run(driver, q.statement, browser.default_params(other))
            assert records == [], f"{q.name} read outside its space"
    finally:
        client.delete(f"/v1/spaces/{other}")


def test_every_node_has_a_caption(driver, demo):
    rows = _run(driver, LIBRARY.load("browser/uncaptioned"), {"space": demo})
    assert [r.data() for r in rows] == []
    labels = _run(driver, LIBRARY.load("browser/labels"), {"space": demo})
    assert {"Memory", "Session", "Stage", "Entity", "Fact", "Merge", "JobRun"} <= {
        r["l"] for r in labels
    }
