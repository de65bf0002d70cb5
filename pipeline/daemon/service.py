"""The probe daemon, wired from its parts in the order data flows through them::

    SchedulerBridge ─► Gate ─► Runs ─► RowSink ─► spool ─► FlushLoop ─► flush process
    (trigger → run     (shutdown,  (caps, probe,  (one row   (fsync'd)  (when to    (DuckDB)
     request; missed    budget)     price, row)    per run)              flush)
     runs → skipped)

Every scheduled run leaves exactly one row: a probe result (``done``), a ``skipped`` row
saying why it could not start (misfire, overrun, budget, shutdown) or an ``aborted`` row
for a probe cut off by shutdown. Rows reach the spool (fsync'd) before they count; the
flush process moves them into DuckDB, so neither the event loop nor the probes wait on
the database, and a reader holding the file only makes the spool grow. Beside the flow:
``AlertSender`` (results → alerts → webhooks), ``Reloader`` (SIGHUP), ``Stopper`` (stop request,
signals, grace period), ``WeeklyReport`` and ``SessionEvents`` (start/heartbeat/stop).
Each part owns its state and gets what it needs here; none inherits from another.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import httpx

from pipeline.config import Config
from pipeline.daemon.alert_sender import AlertSender
from pipeline.daemon.alerts import AlertEvaluator
from pipeline.daemon.bridge import SchedulerBridge
from pipeline.daemon.budget import BudgetGuard
from pipeline.daemon.contract import DaemonError, DaemonStats, DaemonTuning, ProbeFunction
from pipeline.daemon.events import SessionEvents
from pipeline.daemon.flush import Flusher
from pipeline.daemon.flush.daemon_loop import FlushLoop, FlushPacing, account_flush
from pipeline.daemon.gate import Gate, Refused
from pipeline.daemon.held_rows import HeldRows
from pipeline.daemon.metrics import Metrics
from pipeline.daemon.one_run import Runs
from pipeline.daemon.probe_call import ProbeCaller, default_probe_fn
from pipeline.daemon.reloader import Reloader
from pipeline.daemon.report_job import WeeklyReport
from pipeline.daemon.reserved import ReservedFile
from pipeline.daemon.row_sink import RowSink
from pipeline.daemon.schedule import JobSpec, RunRequest, job_specs
from pipeline.daemon.spool import Spool, SpoolError
from pipeline.daemon.startup import row_writer, serve_metrics, warm_start
from pipeline.daemon.stopper import Stopper
from pipeline.daemon.suspend import SuspendAware
from pipeline.daemon.tasks import BackgroundTasks
from pipeline.daemon.workers import ProbeWorkers, daemon_client
from pipeline.warehouse import Lake
from probes.ids import new_run_id
from probes.result import ProbeResult
from probes.sizing import CharsPerToken

__all__ = ["Daemon", "DaemonError", "DaemonStats", "DaemonTuning", "ProbeFunction", "run_daemon"]

log = logging.getLogger("nerfwatch.daemon")


class Daemon:
    """One daemon run. Build it, then ``await run()``; call ``stop()`` from anywhere."""

    def __init__(
        self,
        config: Config,
        *,
        probe_fn: ProbeFunction | None = None,
        tuning: DaemonTuning | None = None,
        config_loader: Callable[[Path], Config] | None = None,
    ) -> None:
        self.config = config
        self.tuning = tuning = tuning or DaemonTuning()
        self.probe_fn = probe_fn or default_probe_fn()
        self.stats = stats = DaemonStats(session_id=new_run_id())
        self.metrics = metrics = Metrics()
        self.spool = Spool(config.warehouse.spool_dir)
        self.held_rows = HeldRows(self.spool)
        self.flusher = Flusher(self.spool, row_writer(config, tuning))
        self.budget = BudgetGuard(config.budget, long_share=tuning.long_budget_share)
        self._reserved = ReservedFile(config.warehouse.spool_dir, stats.session_id)
        self.alerts = AlertEvaluator(config.alerts)
        self._site = config.warehouse.site
        self._tasks = BackgroundTasks()
        self._events = SessionEvents(self.held_rows, stats.session_id, self._tasks, site=self._site)
        self._stopper = Stopper(
            stats, install_signals=tuning.install_signals, on_reload=self.reload
        )
        self._reloader = Reloader(
            current=lambda: self.config,
            apply=self._apply_config,
            events=self._events,
            tasks=self._tasks,
            loader=config_loader,
        )
        self._flush = FlushLoop(
            self.flusher,
            FlushPacing.of(config.daemon, tuning),
            held=self.held_rows,
            on_flushed=functools.partial(account_flush, stats, metrics),
            heartbeat=lambda: self._events.record("heartbeat", None),
        )
        self._sink = RowSink(
            self.held_rows,
            stats=stats,
            metrics=metrics,
            site=self._site,
            on_spooled=self._flush.note_spooled,
        )
        self._gate = Gate(config, budget=self.budget, stopping=self._stopper.is_stopping)
        self._report = WeeklyReport(config, paused=self.reading)
        # Built at start: they need the HTTP client, the warm start or the running loop.
        self._client: httpx.AsyncClient | None = None
        self._workers: ProbeWorkers | None = None
        self._sender: AlertSender | None = None
        self._runs: Runs | None = None
        self._bridge: SchedulerBridge | None = None
        self._flush_task: asyncio.Future[None] | None = None

    # -- public ------------------------------------------------------------------------
    async def run(
        self, *, stop_after_s: float | None = None, stop_event: asyncio.Event | None = None
    ) -> DaemonStats:
        """Run until stopped (signal, ``stop()``, ``stop_event`` or ``stop_after_s``)."""
        self._stopper.attach(asyncio.get_running_loop())
        self._stopper.install_stop_signals()
        try:
            await self._start()
        except BaseException:
            self._stopper.remove_signals()
            await self._release()
            raise
        try:
            await self._stopper.wait(stop_after_s, stop_event)
        finally:
            await self._shutdown()
        return self.stats

    def stop(self, reason: str = "requested") -> None:
        """Ask the daemon to shut down (thread-safe)."""
        self._stopper.request(reason)

    def reload(self) -> None:
        """Re-read the config file (what SIGHUP does)."""
        self._reloader.reload()

    def next_runs(self) -> dict[str, datetime]:
        """Scheduled jobs (probe jobs and ``weekly-report``) and their next run time."""
        return self._bridge.next_runs() if self._bridge is not None else {}

    def reading(self) -> contextlib.AbstractContextManager[None]:
        """Hold off flushes while this process reads the warehouse."""
        return self.flusher.paused()

    async def run_weekly_report(self, now: datetime | None = None) -> Path | None:
        """The weekly job now: analysis, report, phase-change alerts, the report's link."""
        return await self._report.run(now)

    # -- the flow ----------------------------------------------------------------------
    def _wire(self, estimators: dict[str, CharsPerToken]) -> SchedulerBridge:
        """trigger → gate → run → spool; the flush loop takes it from the spool."""
        assert self._client is not None
        probe = ProbeCaller(
            self.probe_fn,
            self._client,
            site=self._site,
            workers=self._workers,
            estimators=estimators,
        )
        self._sender = AlertSender(self.config.alerts, client=self._client, flusher=self.flusher)
        self._runs = Runs(
            self._gate,
            SuspendAware(probe),  # a probe the machine slept through has no valid timings
            self._sink,
            metrics=self.metrics,
            after_result=self._alert,
        )
        return SchedulerBridge(
            on_run=self._on_trigger,
            on_missed=self._on_missed,
            on_missed_runs=self._on_missed_runs,
            stats=self.stats,
            metrics=self.metrics,
        )

    async def _on_trigger(self, request: RunRequest) -> None:
        """A fired run: the gate admits it (and reserves its budget) or its row says why not."""
        assert self._runs is not None
        try:
            await self.budget.prepare()  # a day first met (midnight, a clock step): its spend
        except asyncio.CancelledError:  # the stop cut it off before the gate saw it
            await self._sink.skip(request.spec, request.planned, "shutdown")
            raise
        admitted = self._gate.admit(request.spec)
        if isinstance(admitted, Refused):
            await self._sink.skip(request.spec, request.planned, admitted.reason)
            return
        await self._runs.run(request, admitted)

    def _alert(self, result: ProbeResult) -> None:
        """A spooled result → the alert evaluator → (maybe) an alert, sent in the background."""
        assert self._sender is not None
        event = self.alerts.observe(result)
        if event is not None:
            self.stats.alerts.append(event)
            self._tasks.spawn(self._sender.send(event))

    def _on_missed(self, spec: JobSpec, when: datetime, reason: str) -> None:
        """A run that could not start (overrun, misfire) still leaves its row."""
        self._tasks.spawn(self._sink.skip(spec, when, reason))

    def _on_missed_runs(self, spec: JobSpec, whens: Iterator[datetime], reason: str) -> None:
        """Every run a clock jump skipped leaves its row, written in chunks."""
        self._tasks.spawn(self._sink.skip_all(spec, whens, reason))

    def _apply_config(self, new: Config) -> int:
        """A reloaded config reaches every part that reads it; returns the job count."""
        assert self._bridge is not None
        self._gate.configure(new)
        self.budget.configure(new.budget)
        self.alerts.configure(new.alerts)
        self.config = new
        self._flush.configure(FlushPacing.of(new.daemon, self.tuning))
        self._report.configure(new)
        if self._sender is not None:
            self._sender.configure(new.alerts)
        self._schedule(self._bridge, new)
        return len(self._bridge.specs)

    def _schedule(self, bridge: SchedulerBridge, config: Config) -> None:
        bridge.apply(job_specs(config))
        if self.tuning.schedule_report:
            self._report.schedule(bridge.scheduler)

    # -- start and stop ----------------------------------------------------------------
    async def _start(self) -> None:
        try:
            self.spool.open()
        except (SpoolError, OSError) as exc:
            raise DaemonError(str(exc)) from exc
        # the spool folder is this daemon's now: its reservations file too (a killed
        # predecessor's, if any, is replaced at once)
        self.budget.on_reserved = self._reserved.publish
        self._reserved.publish({})
        log.info(
            "daemon starting: migrating %s and replaying spool %s",
            _where(self.config.warehouse.location),
            self.spool.directory,
        )
        self.flusher.writer.start()  # a flush process's imports overlap with the steps below
        estimators = await warm_start(
            self.config,
            flusher=self.flusher,
            spool=self.spool,
            budget=self.budget,
            alerts=self.alerts,
        )
        self._client = daemon_client()
        if self.config.daemon.probe_threads > 0:
            self._workers = ProbeWorkers(self.config.daemon.probe_threads)
        self.stats.metrics_port = serve_metrics(self.metrics, self.config)
        self._bridge = bridge = self._wire(estimators)
        self._schedule(bridge, self.config)
        bridge.start()
        self._stopper.install_reload_signal()
        await self._events.write("start", f"{len(bridge.specs)} jobs")
        self._flush_task = asyncio.ensure_future(self._flush.run())
        upcoming = [t for key, t in bridge.next_runs().items() if key in bridge.specs and t]
        log.info(
            "daemon started: %d jobs, first run %s, spool %s, warehouse %s",
            len(bridge.specs),
            f"{min(upcoming):%Y-%m-%dT%H:%M:%SZ}" if upcoming else "none",
            self.spool.directory,
            _where(self.config.warehouse.location),
        )

    async def _shutdown(self) -> None:
        """Stop scheduling, grant in-flight probes a grace period, abort the rest, flush."""
        assert self._bridge is not None and self._runs is not None
        self._stopper.begin()
        self._flush.stop()
        self._bridge.pause()
        await self._stopper.end_in_flight(
            self.config.daemon.shutdown_grace_s, self._bridge, self._runs
        )
        self._bridge.shutdown()  # cancels fired runs still reading the day's spend
        await self._stopper.end_fired(self._bridge)  # ... and each spools its row
        await self._tasks.drain()  # skipped-row writes, alert deliveries
        if self._flush_task is not None:
            await self._flush_task
        self._stopper.remove_signals()
        await self.held_rows.retry()
        self.held_rows.abandon()  # what the spool still refuses is lost: counted, logged
        await self._events.write("stop", self.stats.stop_reason)
        self.stats.lost = self.held_rows.abandon()
        outcome = await self._flush.flush()
        if outcome.busy:
            log.warning("final flush deferred: %d rows stay in the spool", self.spool.depth())
        self.stats.caps = self._gate.usage
        await self._release()
        self.stats.spool_depth = self.spool.depth()
        log.info(
            "daemon stopped (%s): %d done, %d skipped, %d aborted, %d lost, spool depth %d",
            self.stats.stop_reason,
            self.stats.done,
            sum(self.stats.skipped.values()),
            self.stats.aborted,
            self.stats.lost,
            self.stats.spool_depth,
        )

    async def _release(self) -> None:
        """Close what ``_start`` opened (also after a failed start)."""
        if self.budget.on_reserved is not None:  # only once the spool folder was ours
            self.budget.on_reserved = None
            self._reserved.remove()
        self.spool.close()
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if self._workers is not None:
            await asyncio.to_thread(self._workers.close)
            self._workers = None
        await asyncio.to_thread(self.flusher.close)
        self.metrics.close()


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


def _where(location: Path | Lake) -> str:
    """How the log names the warehouse: the file, or the lake (no secrets in it)."""
    return location.where if isinstance(location, Lake) else str(location)
