"""Neo4j Browser support: the Mnemograph guide, generated from the saved queries, and the style.

The saved queries live in ``cypher/browser/NN_name.cypher``. Each starts with a header of
``//`` lines: ``slide:`` (queries with the same slide share one), ``title:``, ``view:``
(``graph``: returns nodes for Browser to draw; ``table``: returns plain values only, so no
embedding or token vector ever lands in a table), optionally ``params:`` (parameters besides
``$space`` it reads), then free text explaining it. :func:`guide_html` renders them, in file
order, into a Browser guide (HTML with ``<slide>`` elements; a query's play icon runs it with
one click), so the guide and the queries cannot drift apart. :func:`browser_status` reads where
the connected Neo4j serves Browser, for ``/readyz``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import cypher
from pipelines.graph import GraphStore

QUERY_DIR = cypher.ROOT / "browser"
STYLE_FILE = QUERY_DIR / "style.grass"
# The parameters a guide query may read; the guide's first slide sets all of them at once.
PARAMS: tuple[str, ...] = ("space", "stage", "entity")
DEFAULT_SPACE = "demo"
_HEADER = re.compile(r"^//\s*(slide|title|view|params):\s*(.*?)\s*$")
_PARAM = re.compile(r"\$(\w+)")


class GuideError(ValueError):
    """A saved query whose header is missing or malformed."""


@dataclass(frozen=True)
class GuideQuery:
    name: str  # the statement's name for cypher.load, e.g. "browser/03_stage_graph"
    slide: str
    title: str
    view: Literal["graph", "table"]
    params: tuple[str, ...]
    about: str
    statement: str


def _parse(name: str, text: str) -> GuideQuery:
    fields: dict[str, str] = {}
    about: list[str] = []
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        match = _HEADER.match(line)
        if match and not about:
            fields[match.group(1)] = match.group(2)
        else:
            about.append(line[2:].strip())
    missing = {"slide", "title", "view"} - set(fields)
    if missing:
        raise GuideError(f"{name}: header lacks {', '.join(sorted(missing))}")
    view = fields["view"]
    if view not in ("graph", "table"):
        raise GuideError(f"{name}: view must be graph or table, not {view!r}")
    params = tuple(p.strip() for p in fields.get("params", "").split(",") if p.strip())
    # what cypher.load(name) returns: the file without its comment lines
    statement = "\n".join(ln for ln in text.splitlines() if not ln.startswith("//")).strip()
    used = set(_PARAM.findall(statement))
    if not used <= set(PARAMS) or not set(params) <= used:
        raise GuideError(f"{name}: reads {sorted(used)}, declares {list(params)}; see PARAMS")
    return GuideQuery(
        name=name,
        slide=fields["slide"],
        title=fields["title"],
        view="graph" if view == "graph" else "table",
        params=params,
        about=" ".join(about),
        statement=statement,
    )


@cache
def queries() -> tuple[GuideQuery, ...]:
    """The saved queries in guide order (file name order)."""
    paths = sorted(QUERY_DIR.glob("*.cypher"))
    return tuple(_parse(f"browser/{p.stem}", p.read_text(encoding="utf-8")) for p in paths)


def default_params(space: str = DEFAULT_SPACE) -> dict[str, str]:
    """What the guide's first slide sets: the space; stage and entity empty (= pick one)."""
    return {name: (space if name == "space" else "") for name in PARAMS}


@cache
def style_grass() -> str:
    return STYLE_FILE.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------

_INTRO = """
<p>Mnemograph keeps what an agent remembers in Neo4j. The nodes you will meet:</p>
<ul>
<li><b>Memory</b>: one remembered item verbatim (a turn, a note), with its time, speaker and
<code>status</code> (<code>active</code>, <code>superseded</code>, <code>merged</code>,
<code>archived</code>).</li>
<li><b>Session</b>: a conversation; <code>NEXT</code> links its turns in order.</li>
<li><b>Stage</b>: a period of the history; memories and sessions are <code>IN_STAGE</code>.</li>
<li><b>Entity</b>: a person, place or thing a memory <code>MENTIONS</code>; entities named
together <code>CO_OCCURS</code>.</li>
<li><b>Fact</b>: an atomic statement <code>EXTRACTED_FROM</code> a memory.</li>
<li><b>Schema</b>: a stage's summary; <b>Merge</b> and <b>JobRun</b>: what consolidation
did.</li>
</ul>
<p>Every node belongs to one <b>space</b> and shows its <code>caption</code>. Embeddings and
token vectors stay on the nodes but out of the tables below; in a graph, click a node to see
its properties (long values are cut at a few hundred characters).</p>
<p>Click the &#9654; of a query to run it; click its text to copy it to the editor.</p>
"""

_PARAMS_BLOCK = """
<p>Space to explore: <input value-for="space" value="{space}"></p>
<pre class="runnable">:params {{space: '<span value-key="space">{space}</span>', stage: '', \
entity: ''}}</pre>
<p>Run this once: the queries on the next slides read <code>$space</code>.</p>
"""

_PARAM_INPUT = """
<p>{label}: <input value-for="{name}" value="" placeholder="empty: {fallback}"></p>
<pre class="runnable">:param {name} => '<span value-key="{name}"></span>'</pre>
"""

_FALLBACK = {"stage": "the latest stage", "entity": "the most mentioned entity"}

_UNDO = """
<p>Browser only reads. To revert a supersession or undo a merge, call the API line shown in
the <code>revert</code> / <code>undo</code> column (with your API key if the server has
keys), e.g. <code>curl -XPOST http://127.0.0.1:8000/v1/spaces/demo/merges/ID/undo</code>.</p>
"""


def _text(value: str) -> str:
    """Escaped text with `code` spans."""
    parts = html.escape(value, quote=True).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _query_html(q: GuideQuery, inputs_done: set[str]) -> str:
    out = [f"<h4>{_text(q.title)}</h4>", f"<p>{_text(q.about)}</p>"]
    for name in q.params:
        if name not in inputs_done:
            inputs_done.add(name)
            out.append(_PARAM_INPUT.format(name=name, label=name.title(), fallback=_FALLBACK[name]))
    kind = "a graph" if q.view == "graph" else "a table"
    out.append(f'<p class="lead">Shows {kind}.</p>')
    out.append(f'<pre class="runnable">{html.escape(q.statement, quote=False)}</pre>')
    return "\n".join(out)


def slides() -> list[tuple[str, list[GuideQuery]]]:
    """(slide title, its queries) in guide order."""
    grouped: dict[str, list[GuideQuery]] = {}
    for q in queries():
        grouped.setdefault(q.slide, []).append(q)
    return list(grouped.items())


def guide_html(space: str = DEFAULT_SPACE) -> str:
    """The whole guide: an introduction, then one slide per ``slide:`` of the saved queries."""
    body = [_slide("Your memory as a graph", _INTRO)]
    inputs_done: set[str] = set()
    for n, (title, group) in enumerate(slides()):
        parts = [_query_html(q, inputs_done) for q in group]
        if n == 0:
            parts.append(_PARAMS_BLOCK.format(space=html.escape(space, quote=True)))
        if any("/revert" in q.statement or "/undo" in q.statement for q in group):
            parts.append(_UNDO)
        body.append(_slide(title, "\n".join(parts)))
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        "<title>Mnemograph</title></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def _slide(title: str, content: str) -> str:
    return (
        '<slide class="row-fluid">\n<div class="col-sm-12">\n'
        f"<h3>{_text(title)}</h3>\n{content.strip()}\n</div>\n</slide>"
    )


# ---------------------------------------------------------------------------------------------
# Where Browser is
# ---------------------------------------------------------------------------------------------


def browser_status(store: GraphStore) -> dict[str, Any]:
    """Where the connected Neo4j serves Browser (from its own settings), and whether it asks
    for a password. Never raises: a server that cannot say is reported as such."""
    try:
        rows = store.read("runtime/browser_settings")
    except Exception as exc:  # unreachable, or a user not allowed to read settings
        return {"available": False, "detail": f"could not read Neo4j's settings: {exc}"}
    return describe_settings({str(r["name"]): str(r["value"]) for r in rows})


def describe_settings(settings: Mapping[str, str]) -> dict[str, Any]:
    if settings.get("server.http.enabled", "false").lower() != "true":
        return {"available": False, "detail": "Neo4j's HTTP connector (and Browser) is off"}
    address = settings.get("server.http.advertised_address", "localhost:7474")
    auth = settings.get("dbms.security.auth_enabled", "true").lower() == "true"
    url = f"http://{address}/browser/"
    return {
        "available": True,
        "url": url if auth else url + "?preselectAuthMethod=NO_AUTH",
        "bolt": f"bolt://{settings.get('server.bolt.advertised_address', 'localhost:7687')}",
        "auth": auth,
        "guide_command": settings.get("browser.post_connect_cmd") or None,
    }
