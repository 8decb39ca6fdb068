"""Neo4j Browser checked in a real browser (``make browser-check``).

Starts Mnemograph the way ``make serve`` does (``python -m app serve --manage-neo4j``, with its
own data directory and ports), ingests the demo space through the API
(:mod:`benchmarks.browser_demo`), opens the Browser address the server printed in headless
Chromium (Debian's ``chromium`` driven by Playwright), logs in as a person would (user ``neo4j``,
the password the server generated into ``<data dir>/neo4j-password``, or
MNEMOGRAPH_NEO4J_PASSWORD), waits for the Mnemograph guide
that Browser opens on connecting, sets ``$space`` from the guide, runs every query of the guide
by its play icon and saves a screenshot of each slide's result. Any failed step (no guide, an
error frame, a graph query that draws nothing) ends the run with a non-zero exit.

    python -m benchmarks.browser_check [--out DIR] [--update-docs] [--keep]

Screenshots go to ``--out`` (default ``.mnemograph/browser-check/``); ``--update-docs`` also
copies the guide and stage-graph shots to ``docs/browser/``, which README.md shows.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from benchmarks.browser_demo import DEMO_SPACE, SHOWCASE_CAPTION, ingest_demo
from pipelines import browser

REPO = Path(__file__).resolve().parents[1]
DOCS_SHOTS = {"guide.png": "guide.png", "stage-graph.png": "stage-graph.png"}
# Flags that work in containers without a display or a sandbox; background networking off, or
# Chromium's own outbound connections are refused many at a time.
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1600, "height": 1000}
STEP_TIMEOUT_MS = 60_000
FRAME = "article[data-testid='frame']"  # one result frame of Browser's stream, newest first


class CheckFailed(RuntimeError):
    pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _say(msg: str) -> None:
    print(f"[browser-check] {msg}", flush=True)


# ---------------------------------------------------------------------------------------------
# The server, as `make serve` runs it
# ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def serve(data_dir: Path, ports: dict[str, int], log_path: Path) -> Iterator[dict[str, str]]:
    """Run ``python -m app serve --manage-neo4j``; yield the addresses it printed once ready."""
    env = dict(
        os.environ,
        MNEMOGRAPH_NEO4J_DIR=str(data_dir),
        MNEMOGRAPH_NEO4J_PORT=str(ports["bolt"]),
        MNEMOGRAPH_NEO4J_HTTP_PORT=str(ports["http"]),
        MNEMOGRAPH_SCHEDULER_ENABLED="false",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    cmd = [sys.executable, "-m", "app", "serve", "--manage-neo4j", "--port", str(ports["api"])]
    _say(f"starting: {' '.join(cmd)} (log {log_path})")
    log = log_path.open("w")
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield _wait_served(proc, log_path, f"http://127.0.0.1:{ports['api']}")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # the CLI stops the Neo4j it started
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
        log.close()


def _wait_served(proc: subprocess.Popen[bytes], log: Path, api: str) -> dict[str, str]:
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise CheckFailed(f"the server exited: {log.read_text()[-3000:]}")
        printed = re.search(r"Neo4j Browser: (\S+)", log.read_text())
        with contextlib.suppress(httpx.HTTPError):
            if printed and httpx.get(api + "/readyz", timeout=5).status_code == 200:
                return {"api": api, "browser": printed.group(1)}
        time.sleep(2)
    raise CheckFailed(f"the server was not ready in time: {log.read_text()[-3000:]}")


# ---------------------------------------------------------------------------------------------
# Browser, driven like a person would
# ---------------------------------------------------------------------------------------------


class BrowserSession:
    def __init__(self, page: Any, out: Path) -> None:
        self.page = page
        self.out = out
        self.shots: list[Path] = []

    def shot(self, name: str) -> Path:
        path = self.out / name
        self.page.screenshot(path=str(path))
        self.shots.append(path)
        _say(f"screenshot {path}")
        return path

    def connect(self, url: str, login: tuple[str, str] | None) -> None:
        """Open Browser; log in (``login``: user, password) and connect; wait for the guide."""
        self.page.goto(url)
        guide = self.page.get_by_text("Your memory as a graph")
        connect = self.page.locator("button[data-testid='connect']")
        user = self.page.locator("input[data-testid='username']")
        password = self.page.locator("input[data-testid='password']")
        deadline = time.monotonic() + STEP_TIMEOUT_MS / 1000
        while time.monotonic() < deadline:
            if guide.count() and guide.first.is_visible():
                return
            if login and password.count() and password.first.is_visible():
                user.first.fill(login[0])
                password.first.fill(login[1])
            if connect.count() and connect.first.is_visible():
                connect.first.click()
            time.sleep(0.5)
        raise CheckFailed("Browser did not open the Mnemograph guide after connecting")

    def next_slide(self) -> None:
        self.page.locator("[data-testid='guideNextSlide']").click()
        time.sleep(0.5)

    def run(self, text: str, *, prefix: bool = False) -> None:
        """Click the play icon of the visible guide block showing ``text`` (or starting so)."""
        want = " ".join(text.split())
        blocks = self.page.locator("pre.runnable")
        for i in range(blocks.count()):
            block = blocks.nth(i)
            shown = " ".join(block.inner_text().split())
            if block.is_visible() and (shown.startswith(want) if prefix else shown == want):
                frames_before = self._frame_count()
                block.locator("i.fa-play-circle-o").click()
                self._wait_frame(frames_before)
                return
        raise CheckFailed(f"no visible guide block shows {want[:80]!r}")

    def fill(self, name: str, value: str) -> None:
        box = self.page.locator(f"input[value-for='{name}']").first
        box.fill(value)
        box.press("End")  # a keyup: Browser copies the box into the command below it

    def _frame_count(self) -> int:
        return int(self.page.locator(FRAME).count())

    def _wait_frame(self, before: int) -> None:
        deadline = time.monotonic() + STEP_TIMEOUT_MS / 1000
        while time.monotonic() < deadline:
            if self._frame_count() > before:
                break
            time.sleep(0.3)
        else:
            raise CheckFailed("the query produced no result frame")
        top = self.page.locator(FRAME).first
        while time.monotonic() < deadline:
            text = top.inner_text()
            if "ERROR" in text or "Neo.ClientError" in text:
                raise CheckFailed(f"the query failed in Browser:\n{text[:1500]}")
            if re.search(r"completed after|Successfully set|Displaying|Started streaming", text):
                time.sleep(1.5)  # let the graph layout settle before a screenshot
                return
            time.sleep(0.3)
        raise CheckFailed("the query did not complete in time")

    def graph_shot(self, name: str, select: str) -> Path:
        """The newest frame in full screen, zoomed to fit, with the node whose caption starts
        with ``select`` selected (Browser then lists its properties), as ``name``."""
        frame = self.page.locator(FRAME).first
        frame.locator("button[title='Fullscreen']").click()
        time.sleep(1)
        frame.locator("button[aria-label='zoom-to-fit']").click()
        time.sleep(2)
        nodes = frame.locator("svg g.node")
        for i in range(nodes.count()):
            if " ".join((nodes.nth(i).text_content() or "").split()).startswith(select):
                nodes.nth(i).locator("circle").first.click(force=True)
                time.sleep(1.5)
                break
        path = self.shot(name)
        frame.locator("button[title='Close fullscreen']").click()
        return path

    def graph_nodes(self) -> int:
        """Nodes drawn in the newest frame's graph view (0 after a few seconds: none)."""
        nodes = self.page.locator(FRAME).first.locator("svg g.node")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not nodes.count():
            time.sleep(0.3)
        return int(nodes.count())


def _login(data_dir: Path) -> tuple[str, str] | None:
    """Neo4j's credentials as the server printed where to find them (None: unknown, as with
    ``--api``: Browser then shows its login form and the check fails on it)."""
    from neo4j_runtime import auth
    from neo4j_runtime.settings import NEO4J_USER

    given = os.environ.get("MNEMOGRAPH_NEO4J_PASSWORD")
    path = auth.password_path(data_dir)
    if given:
        return NEO4J_USER, given
    return (NEO4J_USER, path.read_text().strip()) if path.exists() else None


def run_guide(session: BrowserSession, space: str, stage: str) -> dict[str, Any]:
    """Walk the guide slide by slide and run every query; screenshots along the way."""
    counts: dict[str, Any] = {}
    session.shot("guide.png")
    slides = browser.slides()
    for n, (_title, group) in enumerate(slides):
        session.next_slide()
        for q in group:
            if n == 0 and q is group[0]:
                session.fill("space", space)
                session.run(":params", prefix=True)
            if "stage" in q.params:
                session.fill("stage", stage)
                session.run(":param stage", prefix=True)
            session.run(q.statement)
            if q.view == "graph":
                nodes = session.graph_nodes()
                if nodes == 0:
                    text = session.page.locator(FRAME).first.inner_text()[:1500]
                    raise CheckFailed(f"{q.name} drew no graph; the frame shows:\n{text}")
                counts[q.name] = {"graph_nodes": nodes}
            else:
                counts[q.name] = "ok"
            if q.name.endswith("stage_graph"):
                session.graph_shot("stage-graph.png", SHOWCASE_CAPTION[:8])
        session.shot(f"slide-{n + 1:02d}.png")
    return counts


def check(args: argparse.Namespace) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    chromium = args.chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise CheckFailed("Chromium is needed: apt-get install chromium (or pass --chromium)")
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="mnemograph-browser-check-"))
    ports = {"bolt": args.bolt_port, "http": args.http_port, "api": args.api_port}
    ports = {k: v or _free_port() for k, v in ports.items()}
    report: dict[str, Any] = {"ports": ports, "data_dir": str(data_dir)}
    running = contextlib.nullcontext({"api": args.api, "browser": ""}) if args.api else None
    try:
        with running or serve(data_dir, ports, out / "server.log") as addresses:
            report["addresses"] = addresses
            client = httpx.Client(base_url=addresses["api"], timeout=600)
            ready = client.get("/readyz").json()
            if not ready.get("browser", {}).get("available"):
                raise CheckFailed(f"/readyz does not report Browser: {ready.get('browser')}")
            report["readyz_browser"] = ready["browser"]
            if not addresses["browser"]:
                addresses["browser"] = ready["browser"]["url"]
            elif addresses["browser"] != ready["browser"]["url"]:
                raise CheckFailed(f"printed {addresses['browser']}, /readyz {ready['browser']}")
            if not args.reuse_space:
                _say(f"ingesting the demo space {args.space!r} through the API ...")
                report["demo"] = ingest_demo(client, args.space)
            stages = client.get(f"/v1/spaces/{args.space}/stages").json()["stages"]
            stage = max(stages, key=lambda s: s.get("memory_count") or 0)["id"]
            with sync_playwright() as pw:
                context = pw.chromium.launch_persistent_context(
                    tempfile.mkdtemp(prefix="chromium-profile-"),
                    executable_path=chromium,
                    headless=True,
                    args=CHROMIUM_FLAGS,
                    viewport=VIEWPORT,
                )
                try:
                    session = BrowserSession(context.new_page(), out)
                    _say(f"opening {addresses['browser']}")
                    session.connect(addresses["browser"], _login(data_dir))
                    report["queries"] = run_guide(session, args.space, stage)
                    report["screenshots"] = [str(p) for p in session.shots]
                finally:
                    context.close()
    finally:
        if not args.keep and not args.data_dir:
            shutil.rmtree(data_dir, ignore_errors=True)
    if args.update_docs:
        docs = REPO / "docs" / "browser"
        docs.mkdir(parents=True, exist_ok=True)
        for src, dst in DOCS_SHOTS.items():
            shutil.copyfile(out / src, docs / dst)
            _say(f"updated {docs / dst}")
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.browser_check", description=__doc__)
    p.add_argument("--out", default=str(REPO / ".mnemograph" / "browser-check"))
    p.add_argument("--update-docs", action="store_true", help="refresh docs/browser/*.png")
    p.add_argument("--chromium", help="the Chromium binary (default: chromium on PATH)")
    p.add_argument("--data-dir", help="Neo4j data directory (default: a temporary one)")
    p.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    p.add_argument("--bolt-port", type=int, default=0, help="default: a free port")
    p.add_argument("--http-port", type=int, default=0, help="default: a free port")
    p.add_argument("--api-port", type=int, default=0, help="default: a free port")
    p.add_argument(
        "--api",
        help="check an API already running at this URL instead of starting one (the demo "
        "space --space is replaced on it)",
    )
    p.add_argument("--space", default=DEMO_SPACE, help="the demo space's id")
    p.add_argument("--reuse-space", action="store_true", help="with --api: keep the space as is")
    args = p.parse_args(argv)
    t0 = time.monotonic()
    try:
        report = check(args)
    except CheckFailed as exc:
        _say(f"FAILED: {exc}")
        return 1
    report["seconds"] = round(time.monotonic() - t0, 1)
    (Path(args.out) / "report.json").write_text(json.dumps(report, indent=2, default=str))
    _say(f"passed in {report['seconds']} s; report {Path(args.out) / 'report.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
