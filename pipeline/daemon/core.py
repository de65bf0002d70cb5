"""The daemon's shared state and the primitives every part of it uses.

``Daemon`` is assembled from one class per concept, each building on the previous one:
``DaemonCore`` (state, rows, spooling) → ``Flushing`` → ``JobRunning`` → ``Scheduling``
→ ``Reloading`` → ``Stopping`` → ``Daemon`` (start and the public API). Every
scheduled run leaves exactly one row: a probe result (``done``), a ``skipped`` row
saying why it could not start, or an ``aborted`` row for a probe cut off by shutdown.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import httpx
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger

from pipeline.config import Config
from pipeline.daemon.alerts import AlertEvaluator
from pipeline.daemon.budget import BudgetGuard
from pipeline.daemon.caps import Caps
from pipeline.daemon.contract import DaemonStats, DaemonTuning, ProbeFunction
from pipeline.daemon.flush.daemon_side import Flusher, RowWriter
from pipeline.daemon.flush.process_handle import FlushProcess
from pipeline.daemon.flush.segments import EVENT_TABLE, SPOOL_TABLE, SegmentWriter
from pipeline.daemon.held_rows import HeldRows
from pipeline.daemon.metrics import Metrics
from pipeline.daemon.rows import bare_row
from pipeline.daemon.schedule import JobSpec
from pipeline.daemon.spool import Spool
from pipeline.daemon.workers import ProbeWorkers
from pipeline.warehouse import Warehouse
from probes.ids import new_run_id
from probes.result import NERFWATCH_VERSION, ProbeResult
from probes.sizing import CharsPerToken

__all__ = ["DaemonCore"]

log = logging.getLogger("nerfwatch.daemon")


@dataclass(slots=True, eq=False)
class InFlight:
    key: str
    task: asyncio.Task[Any]
    phase: str = "waiting"  # waiting (for a cap) | probing | persisting | persisted


def _default_probe_fn() -> ProbeFunction:
    from probes.runner import run_probe

    return run_probe


def _takes_estimator(fn: ProbeFunction) -> bool:
    """The real runner learns chars-per-token per provider; small test functions do not."""
    try:
        return "estimator" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


class DaemonCore:
    """State shared by the daemon's parts, plus spooling rows and spawning tasks."""

    def __init__(
        self,
        config: Config,
        *,
        probe_fn: ProbeFunction | None = None,
        tuning: DaemonTuning | None = None,
        config_loader: Callable[[Path], Config] | None = None,
    ) -> None:
        self.config = config
        self.tuning = tuning or DaemonTuning()
        self.probe_fn = probe_fn or _default_probe_fn()
        self._with_estimator = _takes_estimator(self.probe_fn)
        self._estimators: dict[str, CharsPerToken] = {}
        self._config_loader = config_loader
        self.stats = DaemonStats(session_id=new_run_id())
        self.metrics = Metrics()
        self.spool = Spool(config.warehouse.spool_dir)
        self.held_rows = HeldRows(self.spool)
        self.flusher = Flusher(self.spool, self._row_writer())
        self.budget = BudgetGuard(config.budget, long_share=self.tuning.long_budget_share)
        self.alerts = AlertEvaluator(config.alerts)
        self._specs: dict[str, JobSpec] = {}
        self._planned: dict[str, datetime] = {}
        self._last_fire: dict[str, datetime] = {}
        self._triggers: dict[str, BaseTrigger] = {}
        self._budget_warned: dict[str, date] = {}
        self._site = config.warehouse.probe_site or socket.gethostname()
        self._inflight: set[InFlight] = set()
        self._background: set[asyncio.Task[Any]] = set()
        self._outstanding = 0
        self._stopping = False
        self._stop = asyncio.Event()
        self._idle = asyncio.Event()
        self._flush_wake = asyncio.Event()
        self._unflushed = 0  # rows spooled since the last flush started
        self._flush_deferred = False  # a reader holds the file: wait out the back-off
        self._flush_failure: str | None = None  # why flushes fail, while they do
        self._scheduler: AsyncIOScheduler | None = None
        self._client: httpx.AsyncClient | None = None
        self._caps: Caps | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._flush_task: asyncio.Future[None] | None = None
        self._workers: ProbeWorkers | None = None

    def _row_writer(self) -> RowWriter:
        """The flush process, or (tuning) a writer in the flush thread of this process."""
        warehouse, spool_dir = self.config.warehouse.path, self.config.warehouse.spool_dir
        lock_wait_s = self.config.daemon.lock_wait_s
        if self.tuning.flush_process:
            return FlushProcess(
                warehouse,
                lock_wait_s=lock_wait_s,
                spool_dir=spool_dir,
                reply_timeout_s=self.tuning.flush_reply_timeout_s,
            )
        # resident: the file is attached per flush (~2 ms) instead of opened (~12 ms)
        resident = Warehouse(warehouse, lock_wait_s=lock_wait_s, resident=True)
        return SegmentWriter(resident, spool_dir)

    def _bare_row(self, spec: JobSpec, when: datetime, status: str, reason: str) -> ProbeResult:
        return bare_row(spec, when, status, reason, site=self._site)

    async def _skip(self, spec: JobSpec, when: datetime, reason: str) -> None:
        self.metrics.skipped.labels(spec.provider.name, reason).inc()
        await self._persist(self._bare_row(spec, when, "skipped", reason))

    async def _persist(self, result: ProbeResult) -> None:
        """Durably append one row (or hold it while the spool refuses it); only then
        does it count."""
        if not await self.held_rows.append(result.to_json()):
            self.stats.lost = self.held_rows.lost
            return
        self._unflushed += 1
        if self._unflushed >= self.tuning.flush_max_rows and not self._flush_deferred:
            self._flush_wake.set()
        if result.run_status == "done":
            self.stats.done += 1
        elif result.run_status == "aborted":
            self.stats.aborted += 1
        else:
            self.stats.skipped[result.skip_reason or "unknown"] += 1

    def _record_event(self, kind: str, detail: str | None) -> None:
        """Spool a lifecycle event in the background (see ``_spool_event``)."""
        self._spawn(self._spool_event(kind, detail))

    async def _spool_event(self, kind: str, detail: str | None) -> None:
        """Lifecycle events go through the spool like probe rows: a session that started
        has its start event on disk, whatever happens to the process afterwards."""
        row = {
            SPOOL_TABLE: EVENT_TABLE,
            "event_id": new_run_id(),
            "session_id": self.stats.session_id,
            "occurred_at": datetime.now(UTC).isoformat(),
            "kind": kind,
            "detail": detail,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "nerfwatch_version": NERFWATCH_VERSION,
            "rows_lost": self.held_rows.lost,
        }
        await self.held_rows.append(json.dumps(row, sort_keys=True))

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
