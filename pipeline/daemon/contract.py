"""What the daemon promises its callers: the probe-function contract, tuning and stats."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Protocol

import httpx

from pipeline.config import ProbeConfig, ProviderConfig
from pipeline.daemon.alerts import AlertEvent
from pipeline.daemon.caps import CapUsage
from probes.result import ProbeResult

__all__ = ["DaemonError", "DaemonStats", "DaemonTuning", "ProbeFunction"]

_SAMPLES = 200_000


class ProbeFunction(Protocol):
    """The runner contract (``probes.runner.run_probe``)."""

    def __call__(
        self,
        provider: ProviderConfig,
        probe: ProbeConfig,
        *,
        client: httpx.AsyncClient,
        seed: int | None = None,
        source: str = "live",
        probe_site: str | None = None,
    ) -> Awaitable[ProbeResult]: ...


class DaemonError(Exception):
    """The daemon cannot start (spool in use, unusable paths).

    ``exit_code`` is 2 when the config asks for what cannot be had (bad input), else 1.
    """

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True, slots=True)
class DaemonTuning:
    """Knobs that are not (yet) config keys; defaults suit production."""

    long_budget_share: float = 0.8  # long-context probes stop at this share of a cap
    heartbeat_s: float = 30.0
    flush_backoff_max_s: float = 30.0
    install_signals: bool = True  # SIGTERM/SIGINT stop, SIGHUP reloads
    # Flush early once this many rows wait: a smaller batch holds the file for less time.
    flush_max_rows: int = 500
    # ... but leave the file free this long between flushes, so readers get their turn.
    flush_min_gap_s: float = 0.25
    schedule_report: bool = True
    # Flush in a child process (no GIL shared with the probes); False: in a thread here.
    flush_process: bool = True
    # A flush process that does not answer in this time is killed and replaced.
    flush_reply_timeout_s: float = 300.0


@dataclass(slots=True)
class DaemonStats:
    """What a daemon run did; returned by ``run_daemon``."""

    session_id: str = ""
    scheduled: int = 0  # scheduled runs, each of which leaves exactly one row
    done: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    aborted: int = 0
    lost: int = 0  # rows the spool refused and memory could not hold (see HeldRows)
    flushes: int = 0
    busy_flushes: int = 0
    flushed_rows: int = 0
    spool_depth: int = 0
    # Recent samples only: a daemon runs for months, these must not grow without bound.
    start_lag_ms: deque[float] = field(default_factory=lambda: deque(maxlen=_SAMPLES))
    flush_ms: deque[float] = field(default_factory=lambda: deque(maxlen=_SAMPLES))
    flush_held_ms: deque[float] = field(default_factory=lambda: deque(maxlen=_SAMPLES))
    flush_cpu_ms: deque[float] = field(default_factory=lambda: deque(maxlen=_SAMPLES))
    caps: CapUsage = field(default_factory=CapUsage)
    alerts: deque[AlertEvent] = field(default_factory=lambda: deque(maxlen=1_000))
    stop_reason: str = ""
    metrics_port: int | None = None

    @property
    def rows(self) -> int:
        return self.done + sum(self.skipped.values()) + self.aborted
