"""The Browser guide is generated from cypher/browser/*.cypher: every saved query is in it,
verbatim, runnable with one click; headers are checked; the style covers every label."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest

import cypher
from pipelines import browser

LABELS = (
    "Space", "Session", "Memory", "Entity", "Stage", "Fact", "Schema", "Merge", "JobRun",
    "Lease", "SchemaMigration",
)  # fmt: skip


class _Runnables(HTMLParser):
    """Collects the text of every <pre class="runnable"> and counts <slide>s."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[str] = []
        self.slides = 0
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        if tag == "slide":
            self.slides += 1
        if tag == "pre" and ("class", "runnable") in attrs:
            self._depth = 1
            self.blocks.append("")
        elif self._depth:
            self._depth += 1

    def handle_endtag(self, tag):
        if self._depth:
            self._depth -= 1

    def handle_data(self, data):
        if self._depth:
            self.blocks[-1] += data


def _parsed(text: str) -> _Runnables:
    parser = _Runnables()
    parser.feed(text)
    return parser


def test_every_saved_query_is_in_the_guide_verbatim():
    names = [n for n in cypher.names() if n.startswith("browser/")]
    queries = browser.queries()
    assert [q.name for q in queries] == names  # file order is guide order, none left out
    blocks = _parsed(browser.guide_html()).blocks
    for q in queries:
        assert q.statement == cypher.load(q.name)
        assert q.statement in blocks, q.name  # the one-click block runs exactly the file


def test_guide_covers_what_a_person_explores():
    titles = " | ".join(q.title.lower() for q in browser.queries())
    for topic in ("spaces", "stage", "neighbourhood", "over time", "supersession", "merges",
                  "pagerank", "job runs"):  # fmt: skip
        assert topic in titles, topic
    views = {q.name: q.view for q in browser.queries()}
    assert "graph" in views.values() and "table" in views.values()


def test_guide_structure():
    page = browser.guide_html()
    parsed = _parsed(page)
    assert parsed.slides == 1 + len(browser.slides())  # the introduction, then one per slide
    assert "<title>Mnemograph</title>" in page
    # the first slide sets every parameter the queries read, with the space from the box
    params = next(b for b in parsed.blocks if b.startswith(":params"))
    assert params == ":params {space: 'demo', stage: '', entity: ''}"
    assert set(browser.default_params()) == set(browser.PARAMS)
    for name in ("stage", "entity"):  # a box and a one-click :param for each optional one
        assert f'value-for="{name}"' in page
        assert any(b.startswith(f":param {name} =>") for b in parsed.blocks)


def test_guide_escapes_the_space():
    page = browser.guide_html(space="<b>'x'</b>")
    assert "<b>'x'</b>" not in page
    assert html.escape("<b>'x'</b>", quote=True) in page


@pytest.mark.parametrize(
    ("header", "error"),
    [
        ("// title: t\n// view: table\n", "lacks slide"),
        ("// slide: s\n// title: t\n// view: pie\n", "view must be"),
        ("// slide: s\n// title: t\n// view: table\n// params: stage\n", "declares"),
    ],
)
def test_bad_headers_are_refused(header, error):
    with pytest.raises(browser.GuideError, match=error):
        browser._parse("browser/x", header + "// About it.\nMATCH (n {space: $space}) RETURN 1")


def test_undeclared_parameters_are_refused():
    text = "// slide: s\n// title: t\n// view: table\nRETURN $space, $password"
    with pytest.raises(browser.GuideError, match="reads"):
        browser._parse("browser/x", text)


def test_style_colours_and_captions_every_label():
    grass = browser.style_grass()
    assert "/*" not in grass  # Browser's GraSS parser has no comments
    for label in LABELS:
        block = re.search(rf"node\.{label} \{{(.*?)\n\}}", grass, re.S)
        assert block, label
        assert 'caption: "{caption}"' in block.group(1) and "color:" in block.group(1), label


def test_describe_settings():
    off = browser.describe_settings({"server.http.enabled": "false"})
    assert off["available"] is False
    base = {
        "server.http.enabled": "true",
        "server.http.advertised_address": "127.0.0.1:7474",
        "server.bolt.advertised_address": "127.0.0.1:7687",
    }
    no_auth = browser.describe_settings({**base, "dbms.security.auth_enabled": "false"})
    assert no_auth["url"] == "http://127.0.0.1:7474/browser/?preselectAuthMethod=NO_AUTH"
    assert no_auth["bolt"] == "bolt://127.0.0.1:7687" and no_auth["auth"] is False
    secured = browser.describe_settings({**base, "dbms.security.auth_enabled": "true"})
    assert secured["url"] == "http://127.0.0.1:7474/browser/" and secured["auth"] is True
