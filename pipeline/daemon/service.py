"""The probe daemon: schedule, cap, budget, persist, flush, alert, shut down cleanly.

Every scheduled run leaves exactly one row: a probe result (``done``), a ``skipped``
row saying why it could not start (misfire, overrun, budget, shutdown) or an
``aborted`` row for a probe cut off by shutdown. Rows reach the spool (fsync'd)
before they count; the flush process moves them into DuckDB, so neither the event loop
nor the probes wait on the database, and a reader holding the file only makes the spool
grow.

This module starts the daemon and holds its public API; the parts live in ``core``
(state, spooling), ``flushing``, ``running`` (one run), ``jobs`` (scheduler
bookkeeping, weekly report), ``reload`` and ``shutdown``.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

import httpx
from apscheduler.events import (
    EVENT_JOB_ERROR,
    EVENT_JOB_EXECUTED,
    EVENT_JOB_MAX_INSTANCES,
    EVENT_JOB_MISSED,
    EVENT_JOB_SUBMITTED,
)
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from pipeline.config import Config
from pipeline.daemon import state
from pipeline.daemon.budget import Spend
from pipeline.daemon.caps import Caps
from pipeline.daemon.contract import DaemonError, DaemonStats, DaemonTuning, ProbeFunction
from pipeline.daemon.schedule import job_specs
from pipeline.daemon.shutdown import Stopping
from pipeline.daemon.spool import SpoolError
from pipeline.daemon.workers import ProbeWorkers
from pipeline.warehouse import Warehouse, WarehouseError
from probes.sizing import CharsPerToken

__all__ = ["Daemon", "DaemonError", "DaemonStats", "DaemonTuning", "ProbeFunction", "run_daemon"]

log = logging.getLogger("nerfwatch.daemon")


class Daemon(Stopping):
    """One daemon run. Build it, then ``await run()``; call ``stop()`` from anywhere."""

    # -- public ------------------------------------------------------------------------
    def stop(self, reason: str = "requested") -> None:
        """Ask the daemon to shut down (thread-safe)."""
        if self._loop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._request_stop, reason)
        else:
            self._request_stop(reason)

    def next_runs(self) -> dict[str, datetime]:
        """Scheduled jobs (probe jobs and ``weekly-report``) and their next run time."""
        if self._scheduler is None:
            return {}
        return {job.id: job.next_run_time for job in self._scheduler.get_jobs()}

    async def run(
        self, *, stop_after_s: float | None = None, stop_event: asyncio.Event | None = None
    ) -> DaemonStats:
        """Run until stopped (signal, ``stop()``, ``stop_event`` or ``stop_after_s``)."""
        self._loop = asyncio.get_running_loop()
        try:
            await self._start()
        except BaseException:
            await self._release()
            raise
        try:
            await self._wait_for_stop(stop_after_s, stop_event)
        finally:
            await self._shutdown()
        return self.stats

    # -- start -------------------------------------------------------------------------
    async def _start(self) -> None:
        try:
            self.spool.open()
        except (SpoolError, OSError) as exc:
            raise DaemonError(str(exc)) from exc
        self._caps = Caps(self.config)
        self.flusher.writer.start()  # a flush process's imports overlap with the steps below
        await self._prepare_warehouse()
        self._client = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=64)
        )
        if self.config.daemon.probe_threads > 0:
            self._workers = ProbeWorkers(self.config.daemon.probe_threads)
        port = self.config.daemon.metrics_port
        if port is not None:
            try:
                self.stats.metrics_port = self.metrics.serve(port)
            except OSError as exc:
                where = f"{self.config.path}: " if self.config.path else ""
                raise DaemonError(
                    f"{where}daemon.metrics_port: cannot listen on 127.0.0.1:{port} "
                    f"({exc.strerror})",
                    exit_code=2,
                ) from exc
        self._start_scheduler()
        self._install_signals()
        await self._spool_event("start", f"{len(self._specs)} jobs")
        self._flush_task = asyncio.ensure_future(self._flush_loop())
        upcoming = [t for key, t in self.next_runs().items() if key in self._specs and t]
        log.info(
            "daemon started: %d jobs, first run %s, spool %s, warehouse %s",
            len(self._specs),
            f"{min(upcoming):%Y-%m-%dT%H:%M:%SZ}" if upcoming else "none",
            self.spool.directory,
            self.config.warehouse.path,
        )

    def _start_scheduler(self) -> None:
        self._scheduler = AsyncIOScheduler(
            timezone=UTC, job_defaults={"coalesce": True, "max_instances": 1}
        )
        self._scheduler.add_listener(
            self._on_scheduler_event,
            EVENT_JOB_SUBMITTED
            | EVENT_JOB_MAX_INSTANCES
            | EVENT_JOB_MISSED
            | EVENT_JOB_EXECUTED
            | EVENT_JOB_ERROR,
        )
        self._apply_jobs(job_specs(self.config))
        self._reschedule_report(self.config)
        self._scheduler.start()  # inside the running loop, as APScheduler 3.11 requires

    async def _prepare_warehouse(self) -> None:
        """Migrate, replay the spool, seed today's spend and open alerts; all best effort."""
        patient = Warehouse(self.config.warehouse.path)  # startup may wait for a reader
        try:
            await asyncio.to_thread(patient.migrate)
        except WarehouseError as exc:
            log.warning("warehouse not migrated yet (%s); will retry at flush", exc)
        outcome = await asyncio.to_thread(self.flusher.flush_once)
        if outcome.rows:
            log.info("spool replay: %d rows, %d new", outcome.rows, outcome.inserted)
        try:
            spent = await asyncio.to_thread(state.today_spend, patient, datetime.now(UTC).date())
            open_alerts = await asyncio.to_thread(state.open_alerts, patient)
            learned = await asyncio.to_thread(state.learned_chars_per_token, patient)
        except WarehouseError as exc:
            log.warning("could not read today's spend from the warehouse: %s", exc)
            spent, open_alerts, learned = {}, set(), {}
        self._estimators = {
            p.name: CharsPerToken(p.chars_per_token, learned.get(p.name))
            for p in self.config.providers
        }
        pending = state.spool_spend(self.spool.iter_pending(), datetime.now(UTC).date())
        for name, spend in pending.items():
            mine = spent.setdefault(name, Spend())
            mine.tokens += spend.tokens
            mine.cost_usd += spend.cost_usd
        self.budget.seed(spent)
        self.alerts.restore_open(open_alerts)


async def run_daemon(
    config: Config,
    *,
    stop_after_s: float | None = None,
    stop_event: asyncio.Event | None = None,
    probe_fn: ProbeFunction | None = None,
    tuning: DaemonTuning | None = None,
) -> DaemonStats:
    """Run the daemon inside the current event loop until stopped; return its stats."""
    daemon = Daemon(config, probe_fn=probe_fn, tuning=tuning)
    return await daemon.run(stop_after_s=stop_after_s, stop_event=stop_event)
