"""Triggers: deterministic spread offsets, anchored intervals, cron seconds, misfire grace."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from pipeline.config import ProbeConfig
from pipeline.daemon.schedule import (
    JobSpec,
    job_specs,
    make_trigger,
    misfire_grace_s,
    offset_s,
    period_s,
)
from tests.support.daemon import make_config


def _spec(tmp_path: Path, key_probe: str, every_s: float | None, cron: str | None) -> JobSpec:
    config = make_config(tmp_path)
    probe = ProbeConfig(key_probe, "arithmetic", 200, every_s, cron, ("alpha",))
    return JobSpec(f"alpha/{key_probe}", config.provider("alpha"), probe)


def test_offsets_are_deterministic_spread_and_inside_the_period() -> None:
    keys = [f"p{i}/probe" for i in range(400)]
    offsets = [offset_s(k, 60.0) for k in keys]
    assert offsets == [offset_s(k, 60.0) for k in keys]
    assert all(0 <= o < 60 for o in offsets)
    buckets = {int(o // 6) for o in offsets}
    assert buckets == set(range(10))  # every tenth of the minute gets jobs


def test_interval_fire_times_are_anchored_and_never_drift(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "short", 10.0, None)
    trigger = make_trigger(spec)
    assert isinstance(trigger, IntervalTrigger)
    now = datetime(2026, 11, 20, 12, 0, 0, tzinfo=UTC)
    first = trigger.get_next_fire_time(None, now)
    assert first is not None
    times = [first]
    for _ in range(100):
        nxt = trigger.get_next_fire_time(times[-1], times[-1] + timedelta(microseconds=1))
        assert nxt is not None
        times.append(nxt)
    gaps = {(b - a).total_seconds() for a, b in itertools.pairwise(times)}
    assert gaps == {10.0}
    phase = (first.timestamp() - datetime(2000, 1, 1, tzinfo=UTC).timestamp()) % 10
    assert abs(phase - offset_s(spec.key, 10.0)) < 1e-3
    # A restart computes the same phase.
    again = make_trigger(spec).get_next_fire_time(None, now)
    assert again == first


def test_cron_gets_a_spread_second_and_half_period_grace(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "hourly", None, "0 * * * *")
    trigger = make_trigger(spec)
    assert isinstance(trigger, CronTrigger)
    fire = trigger.get_next_fire_time(None, datetime(2026, 11, 20, 12, 0, 30, tzinfo=UTC))
    assert fire is not None
    assert fire.minute == 0 and fire.second == int(offset_s(spec.key, 60.0))
    assert period_s(trigger) == 3600
    assert misfire_grace_s(trigger) == 1800


def test_grace_is_a_whole_number_of_seconds_at_least_one(tmp_path: Path) -> None:
    assert misfire_grace_s(make_trigger(_spec(tmp_path, "fast", 0.5, None))) == 1
    assert misfire_grace_s(make_trigger(_spec(tmp_path, "ten", 600.0, None))) == 300


def test_one_job_per_provider_and_probe(tmp_path: Path) -> None:
    specs = job_specs(make_config(tmp_path))
    assert sorted(specs) == ["alpha/short", "beta/short"]


def test_skipped_rows_never_carry_credentials_from_the_base_url(tmp_path: Path) -> None:
    from pipeline.daemon.rows import bare_row

    spec = _spec(tmp_path, "short", 60.0, None)
    leaky = replace(spec.provider, base_url="https://user:s3cret@api.example/v1?key=s3cret#x")
    row = bare_row(replace(spec, provider=leaky), datetime.now(UTC), "skipped", "budget", site="t")
    assert row.endpoint == "https://api.example/v1"
    assert "s3cret" not in row.to_json()
