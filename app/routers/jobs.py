"""Consolidation over HTTP: run jobs, list runs, undo merges, supersede and revert, timelines,
stage schemas. Each endpoint is a thin call into :mod:`pipelines.consolidate`."""

from __future__ import annotations

from fastapi import APIRouter, Body, Depends, Query

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
    TimelineEntry,
)
from app.wiring import get_engine
from pipelines.consolidate import merge, runner, schemas, supersede
from pipelines.engine import Engine

router = APIRouter(prefix="/v1/spaces/{space}", tags=["consolidation"])


@router.post("/jobs/{job}", response_model=JobRun)
def run_job(
    space: str,
    job: JobName,
    body: JobRequest | None = Body(None),
    engine: Engine = Depends(get_engine),
):
    """Run one consolidation job now (409 while another runner holds its lease)."""
    dry_run = body.dry_run if body is not None else None
    return runner.run_job(engine, space, job, dry_run=dry_run, trigger="api")


@router.get("/jobs", response_model=JobRunList)
def list_runs(
    space: str,
    job: JobName | None = None,
    skip: int = Query(0, ge=0),
    limit: int = Query(50, ge=1, le=500),
    engine: Engine = Depends(get_engine),
):
    """Recorded runs of the space, newest first."""
    return JobRunList(runs=runner.list_runs(engine, space, job, skip, limit))


@router.get("/jobs/runs/{run_id}", response_model=JobRun)
def get_run(space: str, run_id: str, engine: Engine = Depends(get_engine)):
    return runner.get_run(engine, space, run_id)


@router.get("/merges", response_model=MergeList)
def list_merges(
    space: str,
    status: str | None = Query(None, pattern="^(applied|undone)$"),
    skip: int = Query(0, ge=0),
    limit: int = Query(50, ge=1, le=500),
    engine: Engine = Depends(get_engine),
):
    return MergeList(merges=merge.list_merges(engine, space, status, skip, limit))


@router.get("/merges/{merge_id}", response_model=Merge)
def get_merge(space: str, merge_id: str, engine: Engine = Depends(get_engine)):
    return merge.get_merge(engine, space, merge_id)


@router.post("/merges/{merge_id}/undo", response_model=MergeUndone)
def undo_merge(space: str, merge_id: str, engine: Engine = Depends(get_engine)):
    """Undo a merge exactly: duplicates active again, the canonical's counters restored."""
    return merge.undo_merge(engine, space, merge_id)


@router.post("/memories/{memory_id}/supersede", response_model=SupersedeResult, status_code=201)
def supersede_memory(
    space: str, memory_id: str, body: SupersedeRequest, engine: Engine = Depends(get_engine)
):
    """Retire a memory in favour of another memory or of new content (history kept)."""
    return supersede.supersede_memory(
        engine,
        space,
        memory_id,
        reason=body.reason,
        by_memory_id=body.by_memory_id,
        content=body.content,
        speaker=body.speaker,
        role=body.role,
    )


@router.get("/memories/{memory_id}/timeline", response_model=Timeline)
def memory_timeline(space: str, memory_id: str, engine: Engine = Depends(get_engine)):
    """The supersession chain a memory belongs to, oldest first."""
    chain = supersede.memory_timeline(engine, space, memory_id)
    return Timeline(memory_id=memory_id, chain=[TimelineEntry(**c) for c in chain])


@router.get("/supersessions", response_model=SupersessionList)
def list_supersessions(
    space: str,
    by: str | None = Query(None, description="e.g. 'api' or 'job:supersede'"),
    skip: int = Query(0, ge=0),
    limit: int = Query(50, ge=1, le=500),
    engine: Engine = Depends(get_engine),
):
    return SupersessionList(
        supersessions=supersede.list_supersessions(engine, space, by, skip, limit)
    )


@router.get("/supersessions/{supersession_id}", response_model=Supersession)
def get_supersession(space: str, supersession_id: str, engine: Engine = Depends(get_engine)):
    return supersede.get_supersession(engine, space, supersession_id)


@router.post("/supersessions/{supersession_id}/revert", response_model=SupersessionReverted)
def revert_supersession(space: str, supersession_id: str, engine: Engine = Depends(get_engine)):
    """Undo a supersession: the older memory and its facts get their prior status back."""
    return supersede.revert_supersession(engine, space, supersession_id)


@router.get("/stages/{stage_id}/schema", response_model=StageSchema)
def stage_schema(
    space: str,
    stage_id: str,
    embedding: bool = Query(False, description="include the summary's embedding"),
    engine: Engine = Depends(get_engine),
):
    """The stage's schema summary, built now if missing or stale."""
    data = schemas.ensure_schema(engine, space, stage_id)
    if not embedding:
        data["embedding"] = None
    return StageSchema(**data)
