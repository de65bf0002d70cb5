"""Turning the config's probes into APScheduler triggers.

One job per (provider, probe). Interval jobs are anchored on a fixed epoch plus a
deterministic offset (hash of the job key modulo the interval), so jobs spread over the
interval, keep their phase across restarts and never drift (APScheduler's own jitter
accumulates). Cron jobs get a deterministic second-of-minute offset for the same reason.
A run may start up to half its period late before it counts as missed (the library's
default grace of 1 s turns any loop stall into silently lost runs).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from pipeline.config import Config, ProbeConfig, ProviderConfig

__all__ = [
    "JobSpec",
    "RunRequest",
    "job_key",
    "job_specs",
    "make_trigger",
    "misfire_grace_s",
    "offset_s",
]

_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class JobSpec:
    """What one scheduled job runs; compared on reload to decide what changed."""

    key: str
    provider: ProviderConfig
    probe: ProbeConfig

    @property
    def schedule(self) -> tuple[float | None, str | None]:
        return (self.probe.every_s, self.probe.cron)


@dataclass(frozen=True, slots=True)
class RunRequest:
    """A run the scheduler fired: the job and the time it was due."""

    spec: JobSpec
    planned: datetime


def job_key(provider: str, probe: str) -> str:
    return f"{provider}/{probe}"


def job_specs(config: Config) -> dict[str, JobSpec]:
    """Every (provider, probe) pair the config asks for, keyed by job key."""
    specs: dict[str, JobSpec] = {}
    for probe in config.probes:
        for name in probe.providers:
            key = job_key(name, probe.name)
            specs[key] = JobSpec(key, config.provider(name), probe)
    return specs


def _hash_fraction(key: str) -> float:
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def offset_s(key: str, period_s: float) -> float:
    """Deterministic start offset in [0, period): the same key always lands the same."""
    return round(_hash_fraction(key) * period_s, 3)


def make_trigger(spec: JobSpec, timezone: str = "UTC") -> BaseTrigger:
    """An anchored interval trigger or a cron trigger with a spread second."""
    probe = spec.probe
    if probe.every_s is not None:
        start = _EPOCH + timedelta(seconds=offset_s(spec.key, probe.every_s))
        return IntervalTrigger(seconds=probe.every_s, start_date=start, timezone=UTC)
    if probe.cron is None:
        raise ValueError(f"probe {probe.name!r} has neither every nor cron")
    fields = probe.cron.split()
    if len(fields) != 5:
        raise ValueError(f"probe {probe.name!r}: cron must have 5 fields, got {probe.cron!r}")
    second = int(offset_s(spec.key, 60.0))
    minute, hour, day, month, day_of_week = fields
    return CronTrigger(
        second=second,
        minute=minute,
        hour=hour,
        day=day,
        month=month,
        day_of_week=day_of_week,
        timezone=timezone,
    )


def period_s(trigger: BaseTrigger, now: datetime | None = None) -> float:
    """The gap between two upcoming fire times (the interval for interval triggers)."""
    if isinstance(trigger, IntervalTrigger):
        return float(trigger.interval_length)
    now = now or datetime.now(UTC)
    first = trigger.get_next_fire_time(None, now)
    if first is None:
        return 60.0
    second = trigger.get_next_fire_time(first, first + timedelta(microseconds=1))
    if second is None:
        return 60.0
    return max((second - first).total_seconds(), 1.0)


def misfire_grace_s(trigger: BaseTrigger) -> int:
    """About half the period in whole seconds (APScheduler wants an int), at least 1 s."""
    return max(round(period_s(trigger) / 2.0), 1)
