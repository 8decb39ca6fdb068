"""Consolidation config: per-space overrides, retention policies, the scheduler's clock."""

from datetime import UTC, datetime, timedelta

import pytest

from pipelines.consolidate.config import (
    DEFAULT_CONSOLIDATION_CONFIG,
    JOB_NAMES,
    SchedulerConfig,
    effective_config,
)
from pipelines.consolidate.scheduler import due_jobs
from pipelines.errors import InvalidInput


def test_space_overrides():
    cfg, policy = effective_config(
        DEFAULT_CONSOLIDATION_CONFIG,
        {"consolidation": {"merge": {"similarity": 0.97}}, "retention": {"archive_after_days": 9}},
    )
    assert cfg.merge.similarity == 0.97 and cfg.merge.lexical == 0.6
    assert policy.archive_after_days == 9 and policy.apply is False
    same, default_policy = effective_config(DEFAULT_CONSOLIDATION_CONFIG, {})
    assert same == DEFAULT_CONSOLIDATION_CONFIG and default_policy.archive_after_days is None


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        (
            {"consolidation": {"merge": {"similarity": 2}}},
            "settings.consolidation.merge.similarity",
        ),
        ({"consolidation": {"nope": {}}}, "settings.consolidation"),
        ({"consolidation": "fast"}, "settings.consolidation"),
        ({"retention": {"archive_after_days": -1}}, "settings.retention.archive_after_days"),
        ({"retention": {"apply": "yes"}}, "settings.retention.apply"),
    ],
)
def test_bad_overrides_name_the_setting(settings, field):
    with pytest.raises(InvalidInput) as err:
        effective_config(DEFAULT_CONSOLIDATION_CONFIG, settings)
    assert err.value.field == field


def test_scheduler_config_and_due_jobs():
    with pytest.raises(ValueError):
        SchedulerConfig(intervals_seconds=(("nope", 1.0),))
    now = datetime(2024, 1, 1, tzinfo=UTC)
    intervals = {"decay": 60.0, "merge": None, "upkeep": 3600.0}
    last = {"decay": now - timedelta(seconds=61), "upkeep": now - timedelta(seconds=10)}
    assert due_jobs(last, intervals, now) == ["decay"]
    assert due_jobs({}, intervals, now) == ["decay", "upkeep"]  # never run: due
    assert set(dict(SchedulerConfig().intervals_seconds)) == set(JOB_NAMES)


def test_parse_intervals():
    from pipelines.consolidate.config import parse_intervals

    cfg = parse_intervals("decay=30m, merge=2h,retention=off,upkeep=90")
    assert cfg.interval("decay") == 1800 and cfg.interval("merge") == 7200
    assert cfg.interval("retention") is None and cfg.interval("upkeep") == 90
    assert cfg.interval("schemas") == 6 * 3600  # untouched default
    assert parse_intervals("") == SchedulerConfig()
    for bad in ("nope=1h", "decay", "decay=abc", "decay=-1h"):
        with pytest.raises(ValueError):
            parse_intervals(bad)


def test_the_api_accepts_exactly_the_known_jobs():
    from typing import get_args

    from app.schemas.jobs import JobName

    assert set(get_args(JobName)) == set(JOB_NAMES)


def test_the_default_lease_frees_within_two_minutes_of_a_crash():
    from pipelines.consolidate.config import RunnerConfig

    cfg = RunnerConfig()
    assert cfg.lease_ttl_seconds <= 120.0
    assert cfg.renew_every_seconds * 2 <= cfg.lease_ttl_seconds
    # a heartbeat slower than half the ttl is capped there (one missed beat keeps the lease)
    assert RunnerConfig(lease_ttl_seconds=10.0, renew_every_seconds=6.0).heartbeat_seconds == 5.0
