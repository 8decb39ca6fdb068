"""Neo4j Browser's Mnemograph guide and style (public, like /healthz: they hold no data).

Browser runs on Neo4j's HTTP port and fetches these from the API's origin, so the responses
allow any origin and answer the CORS preflight Browser's guide fetch triggers.
"""

from __future__ import annotations

from functools import lru_cache

from fastapi import APIRouter, Response
from fastapi.responses import HTMLResponse, PlainTextResponse

from pipelines import browser

router = APIRouter(prefix="/browser", tags=["browser"])

_HEADERS = {"Access-Control-Allow-Origin": "*", "Cache-Control": "no-cache"}


@lru_cache(maxsize=1)
def _guide() -> str:
    return browser.guide_html()


@router.get("/guide", response_class=HTMLResponse)
def guide() -> HTMLResponse:
    """The guide Browser opens on connecting (`:guide http://<api>/browser/guide`)."""
    return HTMLResponse(_guide(), headers=_HEADERS)


@router.get("/style.grass", response_class=PlainTextResponse)
def style() -> PlainTextResponse:
    """Browser's graph style: a colour per label, captions from the `caption` property."""
    return PlainTextResponse(browser.style_grass(), headers=_HEADERS)


@router.options("/{name}", include_in_schema=False)
def preflight(name: str) -> Response:
    return Response(
        status_code=204,
        headers={
            **_HEADERS,
            "Access-Control-Allow-Methods": "GET, OPTIONS",
            "Access-Control-Allow-Headers": "cache-control, pragma, content-type",
            "Access-Control-Max-Age": "600",
        },
    )
