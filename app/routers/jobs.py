"""Consolidation over HTTP: run jobs, list runs, undo merges, supersede and revert, timelines,
stage schemas. Each endpoint is a thin call into :mod:`pipelines.consolidate`."""

from __future__ import annotations

from fastapi import APIRouter, Body, Query

from app.schemas.common import IdPath, Skip, SpacePath
from app.schemas.jobs import (
    JobName,
    JobRequest,
    JobRun,
    JobRunList,
    Merge,
    MergeList,
    MergeUndone,
    StageSchema,
    SupersedeRequest,
    SupersedeResult,
    Supersession,
    SupersessionList,
    SupersessionReverted,
    Timeline,
)
from app.services import ServicesDep
from pipelines import maintenance
from pipelines.consolidate import merge, runner, supersessions
from pipelines.errors import NotFound

router = APIRouter(prefix="/v1/spaces/{space}", tags=["consolidation"])


@router.post("/jobs/{job}", response_model=JobRun)
def run_job(
    space: SpacePath, job: JobName, services: ServicesDep, body: JobRequest | None = Body(None)
) -> JobRun:
    """Run one consolidation job now (409 while another runner holds its lease)."""
    dry_run = body.dry_run if body is not None else None
    return runner.run_job(services.engine, space, job, dry_run=dry_run, runner=runner.Runner("api"))


@router.get("/jobs", response_model=JobRunList)
def list_runs(
    space: SpacePath,
    services: ServicesDep,
    job: JobName | None = None,
    skip: Skip = 0,
    limit: int = Query(50, ge=1, le=500),
) -> JobRunList:
    """Recorded runs of the space, newest first."""
    return JobRunList(runs=runner.list_runs(services.engine, space, job, skip, limit))


@router.get("/jobs/runs/{run_id}", response_model=JobRun)
def get_run(space: SpacePath, run_id: IdPath, services: ServicesDep) -> JobRun:
    return runner.get_run(services.engine, space, run_id)


@router.get("/merges", response_model=MergeList)
def list_merges(
    space: SpacePath,
    services: ServicesDep,
    status: str | None = Query(None, pattern="^(applied|undone)$"),
    skip: Skip = 0,
    limit: int = Query(50, ge=1, le=500),
) -> MergeList:
    return MergeList(merges=merge.list_merges(services.engine, space, status, skip, limit))


@router.get("/merges/{merge_id}", response_model=Merge)
def get_merge(space: SpacePath, merge_id: IdPath, services: ServicesDep) -> Merge:
    return merge.get_merge(services.engine, space, merge_id)


@router.post("/merges/{merge_id}/undo", response_model=MergeUndone)
def undo_merge(space: SpacePath, merge_id: IdPath, services: ServicesDep) -> MergeUndone:
    """Undo a merge exactly: duplicates active again, the canonical's counters restored."""
    return merge.undo_merge(services.engine, space, merge_id)


@router.post("/memories/{memory_id}/supersede", response_model=SupersedeResult, status_code=201)
def supersede_memory(
    space: SpacePath, memory_id: IdPath, body: SupersedeRequest, services: ServicesDep
) -> SupersedeResult:
    """Retire a memory in favour of another memory or of new content (history kept)."""
    return supersessions.supersede_memory(
        services.engine, services.ingestor, space, memory_id, body
    )


@router.get("/memories/{memory_id}/timeline", response_model=Timeline)
def memory_timeline(space: SpacePath, memory_id: IdPath, services: ServicesDep) -> Timeline:
    """The supersession chain a memory belongs to, oldest first."""
    chain = supersessions.memory_timeline(services.engine, space, memory_id)
    return Timeline(memory_id=memory_id, chain=chain)


@router.get("/supersessions", response_model=SupersessionList)
def list_supersessions(
    space: SpacePath,
    services: ServicesDep,
    by: str | None = Query(None, description="e.g. 'api' or 'job:supersede'"),
    skip: Skip = 0,
    limit: int = Query(50, ge=1, le=500),
) -> SupersessionList:
    found = supersessions.list_supersessions(services.engine, space, by, skip, limit)
    return SupersessionList(supersessions=found)


@router.get("/supersessions/{supersession_id}", response_model=Supersession)
def get_supersession(
    space: SpacePath, supersession_id: IdPath, services: ServicesDep
) -> Supersession:
    return supersessions.get_supersession(services.engine, space, supersession_id)


@router.post("/supersessions/{supersession_id}/revert", response_model=SupersessionReverted)
def revert_supersession(
    space: SpacePath, supersession_id: IdPath, services: ServicesDep
) -> SupersessionReverted:
    """Undo a supersession: the older memory and its facts get their prior status back."""
    return supersessions.revert_supersession(services.engine, space, supersession_id)


@router.get("/stages/{stage_id}/schema", response_model=StageSchema)
def stage_schema(
    space: SpacePath,
    stage_id: IdPath,
    services: ServicesDep,
    embedding: bool = Query(False, description="include the summary's embedding"),
) -> StageSchema:
    """The stage's stored schema summary (``stale: true``: the stage changed since it was
    built). Never builds one: a missing or stale schema is queued for the background refresher
    (the ``schemas`` job builds them too); a missing one is a 404 with field ``schema``."""
    schema, _ = maintenance.stored_stage_schema(services.engine, space, stage_id)
    if schema is None:
        raise NotFound(
            f"stage {stage_id!r} has no schema summary yet: a build is queued (the `schemas` "
            "job builds them); retry shortly",
            field="schema",
        )
    return schema if embedding else schema.model_copy(update={"embedding": None})
