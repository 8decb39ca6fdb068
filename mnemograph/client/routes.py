"""Every API route the SDK calls, by the client method that calls it.

The calls (:mod:`mnemograph.client.calls`) build their paths from these templates, so the
table is where the SDK's use of the API is declared: a unit test checks it against the
server's OpenAPI document (no public route left out), an integration test sends every entry
to a live server (no entry that does not work).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

#: Methods a server applies the same way however often they arrive.
_IDEMPOTENT_METHODS = frozenset({"GET", "PUT", "PATCH", "DELETE"})


def seg(value: str) -> str:
    """One path segment, escaped (memory ids may hold ':' or spaces)."""
    return quote(value, safe="")


@dataclass(frozen=True)
class Route:
    """One route: its method, its OpenAPI path template and whether sending it twice is the
    same as sending it once (``idempotent``: a POST only when declared so)."""

    method: str
    template: str
    idempotent_post: bool = False

    @property
    def idempotent(self) -> bool:
        return self.method in _IDEMPOTENT_METHODS or self.idempotent_post

    def path(self, **params: str) -> str:
        """The template filled in, each parameter escaped as one segment."""
        return self.template.format(**{k: seg(v) for k, v in params.items()})


_S = "/v1/spaces/{space}"

#: Client method -> the route it sends (both clients, sync and async, have each method).
ROUTES: dict[str, Route] = {
    # health
    "health": Route("GET", "/healthz"),
    "ready": Route("GET", "/readyz"),
    "limits": Route("GET", "/v1/limits"),
    # spaces (creating an existing id returns it unchanged: safe to resend)
    "list_spaces": Route("GET", "/v1/spaces"),
    "iter_spaces": Route("GET", "/v1/spaces"),
    "create_space": Route("POST", "/v1/spaces", idempotent_post=True),
    "get_space": Route("GET", _S),
    "update_space": Route("PATCH", _S),
    "delete_space": Route("DELETE", _S),
    # writing (idempotent only with explicit ids: decided per call)
    "add_session": Route("POST", f"{_S}/sessions"),
    "add_memories": Route("POST", f"{_S}/memories"),
    "get_memory": Route("GET", f"{_S}/memories/{{memory_id}}"),
    "delete_memory": Route("DELETE", f"{_S}/memories/{{memory_id}}"),
    # reading (POSTs that write nothing the caller can see twice)
    "recall": Route("POST", f"{_S}/recall", idempotent_post=True),
    "context": Route("POST", f"{_S}/context", idempotent_post=True),
    # browsing
    "list_entities": Route("GET", f"{_S}/entities"),
    "iter_entities": Route("GET", f"{_S}/entities"),
    "get_entity": Route("GET", f"{_S}/entities/{{key}}"),
    "list_stages": Route("GET", f"{_S}/stages"),
    "iter_stages": Route("GET", f"{_S}/stages"),
    "get_stage": Route("GET", f"{_S}/stages/{{stage_id}}"),
    "stage_schema": Route("GET", f"{_S}/stages/{{stage_id}}/schema"),
    "list_facts": Route("GET", f"{_S}/facts"),
    "iter_facts": Route("GET", f"{_S}/facts"),
    # consolidation
    "run_job": Route("POST", f"{_S}/jobs/{{job}}"),
    "list_jobs": Route("GET", f"{_S}/jobs"),
    "iter_jobs": Route("GET", f"{_S}/jobs"),
    "get_job_run": Route("GET", f"{_S}/jobs/runs/{{run_id}}"),
    "list_merges": Route("GET", f"{_S}/merges"),
    "iter_merges": Route("GET", f"{_S}/merges"),
    "get_merge": Route("GET", f"{_S}/merges/{{merge_id}}"),
    "undo_merge": Route("POST", f"{_S}/merges/{{merge_id}}/undo"),
    "supersede": Route("POST", f"{_S}/memories/{{memory_id}}/supersede"),
    "timeline": Route("GET", f"{_S}/memories/{{memory_id}}/timeline"),
    "list_supersessions": Route("GET", f"{_S}/supersessions"),
    "iter_supersessions": Route("GET", f"{_S}/supersessions"),
    "get_supersession": Route("GET", f"{_S}/supersessions/{{supersession_id}}"),
    "revert_supersession": Route("POST", f"{_S}/supersessions/{{supersession_id}}/revert"),
    # export and import (an import batch is idempotent: the server says so)
    "export": Route("GET", f"{_S}/export"),
    "transfer_counts": Route("GET", f"{_S}/export/counts"),
    "import_records": Route("POST", f"{_S}/import", idempotent_post=True),
}

#: Public routes the SDK leaves out on purpose, and why.
NOT_CALLED: dict[tuple[str, str], str] = {
    ("GET", "/browser/guide"): "HTML served to Neo4j Browser, not an API call",
    ("GET", "/browser/style.grass"): "Neo4j Browser's graph style, not an API call",
}
