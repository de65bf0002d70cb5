"""The probe daemon: schedule, cap, budget, persist, flush, alert, shut down cleanly.

Every scheduled run leaves exactly one row: a probe result (``done``), a ``skipped``
row saying why it could not start (misfire, overrun, budget, shutdown) or an
``aborted`` row for a probe cut off by shutdown. Rows reach the spool (fsync'd)
before they count; a worker thread moves them into DuckDB, so the event loop never
waits on the database and a reader holding the file only makes the spool grow.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import logging
import os
import signal
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from apscheduler.events import (
    EVENT_JOB_ERROR,
    EVENT_JOB_EXECUTED,
    EVENT_JOB_MAX_INSTANCES,
    EVENT_JOB_MISSED,
    EVENT_JOB_SUBMITTED,
    JobExecutionEvent,
    JobSubmissionEvent,
    SchedulerEvent,
)
from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger

from pipeline.config_types import Config, ProviderConfig
from pipeline.daemon import state
from pipeline.daemon.alerts import (
    AlertEvaluator,
    AlertEvent,
    deliver,
    send_phase_alert,
    send_report_link,
)
from pipeline.daemon.budget import BudgetGuard, Reservation, Spend, result_usage
from pipeline.daemon.caps import Caps, CapUsage
from pipeline.daemon.contract import DaemonError, DaemonStats, DaemonTuning, ProbeFunction
from pipeline.daemon.flusher import Flusher, FlushOutcome
from pipeline.daemon.metrics import Metrics
from pipeline.daemon.report_job import JOB_ID as REPORT_JOB_ID
from pipeline.daemon.report_job import add_report_job, analyse_and_render
from pipeline.daemon.rows import bare_row, version
from pipeline.daemon.schedule import JobSpec, job_specs, make_trigger, misfire_grace_s
from pipeline.daemon.spool import Spool, SpoolError
from pipeline.daemon.workers import ProbeWorkers
from pipeline.warehouse import Warehouse, WarehouseError
from probes.ids import new_run_id
from probes.result import ProbeResult
from probes.sizing import CharsPerToken

__all__ = ["Daemon", "DaemonError", "DaemonStats", "DaemonTuning", "ProbeFunction", "run_daemon"]

log = logging.getLogger("nerfwatch.daemon")

_MAX_BYPASSED_ROWS = 1_000  # after a long suspend, do not write days of skipped rows


@dataclass(slots=True, eq=False)
class _InFlight:
    key: str
    task: asyncio.Task[Any]
    phase: str = "waiting"  # waiting (for a cap) | probing | persisting


def _default_probe_fn() -> ProbeFunction:
    from probes.runner import run_probe

    return run_probe


def _takes_estimator(fn: ProbeFunction) -> bool:
    """The real runner learns chars-per-token per provider; small test functions do not."""
    try:
        return "estimator" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


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
        self.tuning = tuning or DaemonTuning()
        self.probe_fn = probe_fn or _default_probe_fn()
        self._with_estimator = _takes_estimator(self.probe_fn)
        self._estimators: dict[str, CharsPerToken] = {}
        self._config_loader = config_loader
        self.stats = DaemonStats(session_id=new_run_id())
        self.metrics = Metrics()
        self.warehouse = Warehouse(config.warehouse.path, lock_wait_s=config.daemon.lock_wait_s)
        self.spool = Spool(config.warehouse.spool_dir)
        self.flusher = Flusher(self.spool, self.warehouse)
        self.budget = BudgetGuard(config.budget, long_share=self.tuning.long_budget_share)
        self.alerts = AlertEvaluator(config.alerts)
        self._specs: dict[str, JobSpec] = {}
        self._planned: dict[str, datetime] = {}
        self._last_fire: dict[str, datetime] = {}
        self._triggers: dict[str, BaseTrigger] = {}
        self._budget_warned: dict[str, date] = {}
        self._site = config.warehouse.probe_site or socket.gethostname()
        self._inflight: set[_InFlight] = set()
        self._background: set[asyncio.Task[Any]] = set()
        self._outstanding = 0
        self._stopping = False
        self._stop = asyncio.Event()
        self._idle = asyncio.Event()
        self._flush_wake = asyncio.Event()
        self._scheduler: AsyncIOScheduler | None = None
        self._client: httpx.AsyncClient | None = None
        self._caps: Caps | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._flush_task: asyncio.Future[None] | None = None
        self._workers: ProbeWorkers | None = None

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

    def reading(self) -> contextlib.AbstractContextManager[None]:
        """Hold off flushes so this process may open the warehouse read-only.

        DuckDB refuses a read-only and a read-write connection to one file inside one
        process; other processes just retry the lock.
        """
        return self.flusher.paused()

    def reload(self) -> None:
        """Re-read the config file (what SIGHUP does)."""
        self._spawn(self._reload())

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
        await self._prepare_warehouse()
        self._client = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=64)
        )
        if self.tuning.probe_threads > 0:
            self._workers = ProbeWorkers(self.tuning.probe_threads)
        port = self.config.daemon.metrics_port
        if port is not None:
            try:
                self.stats.metrics_port = self.metrics.serve(port)
            except OSError as exc:
                raise DaemonError(f"metrics endpoint 127.0.0.1:{port}: {exc.strerror}") from exc
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
        self._install_signals()
        self._record_event("start", f"{len(self._specs)} jobs")
        self._flush_task = asyncio.ensure_future(self._flush_loop())
        upcoming = [t for key, t in self.next_runs().items() if key in self._specs and t]
        log.info(
            "daemon started: %d jobs, first run %s, spool %s, warehouse %s",
            len(self._specs),
            f"{min(upcoming):%Y-%m-%dT%H:%M:%SZ}" if upcoming else "none",
            self.spool.directory,
            self.warehouse.path,
        )

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
        except WarehouseError as exc:
            log.warning("could not read today's spend from the warehouse: %s", exc)
            spent, open_alerts = {}, set()
        pending = state.spool_spend(self.spool.iter_pending(), datetime.now(UTC).date())
        for name, spend in pending.items():
            mine = spent.setdefault(name, Spend())
            mine.tokens += spend.tokens
            mine.cost_usd += spend.cost_usd
        self.budget.seed(spent)
        self.alerts.restore_open(open_alerts)

    def _install_signals(self) -> None:
        if not self.tuning.install_signals or self._loop is None:
            return
        loop = self._loop
        loop.add_signal_handler(signal.SIGTERM, self._request_stop, "SIGTERM")
        loop.add_signal_handler(signal.SIGINT, self._request_stop, "SIGINT")
        loop.add_signal_handler(signal.SIGHUP, self.reload)

    def _remove_signals(self) -> None:
        if not self.tuning.install_signals or self._loop is None:
            return
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            self._loop.remove_signal_handler(sig)

    # -- jobs --------------------------------------------------------------------------
    def _apply_jobs(self, specs: dict[str, JobSpec]) -> None:
        """Add, replace or remove jobs so the scheduler matches ``specs``."""
        assert self._scheduler is not None
        for key in set(self._specs) - set(specs):
            self._scheduler.remove_job(key)
            self._last_fire.pop(key, None)
            self._triggers.pop(key, None)
            log.info("job removed: %s", key)
        for key, spec in specs.items():
            old = self._specs.get(key)
            if old is not None and old.schedule == spec.schedule:
                continue
            trigger = make_trigger(spec)
            self._triggers[key] = trigger
            self._scheduler.add_job(
                self._job,
                trigger,
                args=[key],
                id=key,
                name=key,
                misfire_grace_time=misfire_grace_s(trigger),
                coalesce=True,
                max_instances=1,
                replace_existing=True,
            )
            self._last_fire.pop(key, None)
        self._specs = dict(specs)

    def _trigger(self, key: str) -> BaseTrigger | None:
        return self._triggers.get(key)

    def _on_scheduler_event(self, event: SchedulerEvent) -> None:
        """Turn scheduler events into bookkeeping and skipped rows (runs on the loop)."""
        key = getattr(event, "job_id", None)
        if key is None or key not in self._specs:
            return
        if isinstance(event, JobSubmissionEvent):
            times = list(event.scheduled_run_times)
            self._record_bypassed(key, times[0])
            self._last_fire[key] = times[-1]
            self.stats.scheduled += len(times)
            if event.code == EVENT_JOB_SUBMITTED:
                self._planned[key] = times[-1]
                self._outstanding += len(times)
                self._idle.clear()
            else:  # max instances: the previous run is still going
                for when in times:
                    self._spawn(self._skip(self._specs[key], when, "overrun"))
        elif isinstance(event, JobExecutionEvent):
            if event.code == EVENT_JOB_MISSED:
                self._spawn(self._skip(self._specs[key], event.scheduled_run_time, "misfire"))
            self._outstanding -= 1
            if self._outstanding <= 0:
                self._outstanding = 0
                self._idle.set()

    def _record_bypassed(self, key: str, first_due: datetime) -> None:
        """Coalescing drops late runs without an event: give each one a skipped row."""
        last = self._last_fire.get(key)
        trigger = self._trigger(key)
        if last is None or trigger is None:
            return
        when = trigger.get_next_fire_time(last, last + timedelta(microseconds=1))
        bypassed = 0
        while when is not None and when < first_due and bypassed < _MAX_BYPASSED_ROWS:
            self.stats.scheduled += 1
            self._spawn(self._skip(self._specs[key], when, "misfire"))
            bypassed += 1
            when = trigger.get_next_fire_time(when, when + timedelta(microseconds=1))
        if bypassed:
            log.warning("job %s: %d coalesced runs recorded as skipped (misfire)", key, bypassed)

    async def _job(self, key: str) -> None:
        """One scheduled run: gates (shutdown, budget), caps, probe, spool."""
        now = datetime.now(UTC)
        planned = self._planned.pop(key, now)
        lag = (now - planned).total_seconds()
        self.stats.start_lag_ms.append(lag * 1000)
        self.metrics.start_lag.observe(max(lag, 0.0))
        spec = self._specs.get(key)
        if spec is None:
            return
        if self._stopping:
            await self._skip(spec, planned, "shutdown")
            return
        reservation = self.budget.reserve(spec.provider, spec.probe)
        if isinstance(reservation, str):
            self._warn_budget(key, reservation)
            await self._skip(spec, planned, "budget")
            return
        await self._probe(spec, planned, reservation)

    def _warn_budget(self, key: str, why: str) -> None:
        """A warning on a job's first budget skip of the (UTC) day, debug lines after."""
        day = datetime.now(UTC).date()
        if self._budget_warned.get(key) != day:
            self._budget_warned[key] = day
            log.warning(
                "budget: skipping %s for the rest of the day or until spend allows: %s", key, why
            )
        else:
            log.debug("budget: skipping %s: %s", key, why)

    async def _probe(self, spec: JobSpec, planned: datetime, reservation: Reservation) -> None:
        assert self._caps is not None and self._client is not None
        task = asyncio.current_task()
        assert task is not None
        entry = _InFlight(spec.key, task)
        self._inflight.add(entry)
        self.metrics.in_flight.inc()
        used: Spend | None = None
        try:
            async with self._caps.slot(spec.provider, spec.probe):
                if self._stopping:  # stop came while this run waited for a slot
                    await self._skip(spec, planned, "shutdown")
                    return
                entry.phase = "probing"
                result = await self._call_probe(spec)
            entry.phase = "persisting"
            used = result_usage(spec.provider, result)
            await self._persist(result)
            self._after_result(result)
        except asyncio.CancelledError:
            if entry.phase == "persisting":
                return  # the shielded spool append completes on its own
            if entry.phase == "probing":
                used = Spend(reservation.tokens, reservation.cost_usd)  # may have been billed
                row = self._bare_row(spec, datetime.now(UTC), "aborted", "shutdown")
            else:
                row = self._bare_row(spec, planned, "skipped", "shutdown")
            await self._persist(row)
        except Exception as exc:  # a bug in the probe function must not kill the schedule
            log.error("probe %s raised %s: %s", spec.key, type(exc).__name__, exc)
            row = self._bare_row(spec, datetime.now(UTC), "aborted", "internal_error")
            row.error_detail = type(exc).__name__
            await self._persist(row)
        finally:
            self.budget.settle(reservation, used)
            self._inflight.discard(entry)
            self.metrics.in_flight.dec()
            self._update_budget_metrics(spec.provider.name)

    async def _call_probe(self, spec: JobSpec) -> ProbeResult:
        extras: dict[str, Any] = {"source": "live", "probe_site": self._site}
        extras.update(self._probe_extras(spec.provider))
        if self._workers is not None:
            return await self._workers.run(self.probe_fn, spec.provider, spec.probe, **extras)
        assert self._client is not None
        return await self.probe_fn(spec.provider, spec.probe, client=self._client, **extras)

    def _probe_extras(self, provider: ProviderConfig) -> dict[str, Any]:
        if not self._with_estimator:
            return {}
        if provider.name not in self._estimators:
            self._estimators[provider.name] = CharsPerToken(provider.chars_per_token)
        return {"estimator": self._estimators[provider.name]}

    def _bare_row(self, spec: JobSpec, when: datetime, status: str, reason: str) -> ProbeResult:
        return bare_row(spec, when, status, reason, site=self._site)

    async def _skip(self, spec: JobSpec, when: datetime, reason: str) -> None:
        self.metrics.skipped.labels(spec.provider.name, reason).inc()
        await self._persist(self._bare_row(spec, when, "skipped", reason))

    async def _persist(self, result: ProbeResult) -> None:
        """Durably append one row; only then does it count."""
        try:
            await self.spool.append(result.to_json())
        except SpoolError as exc:
            self.stats.lost += 1
            log.error("row %s for %s could not be spooled: %s", result.run_id, result.provider, exc)
            return
        if result.run_status == "done":
            self.stats.done += 1
        elif result.run_status == "aborted":
            self.stats.aborted += 1
        else:
            self.stats.skipped[result.skip_reason or "unknown"] += 1

    def _after_result(self, result: ProbeResult) -> None:
        self.metrics.observe(result)
        event = self.alerts.observe(result)
        if event is not None:
            self.stats.alerts.append(event)
            self._spawn(self._send_alert(event))

    async def _send_alert(self, event: AlertEvent) -> None:
        log.warning("alert %s: %s %s", event.kind, event.title, event.detail)
        delivered = await deliver(self.config.alerts.webhooks, event, self._client)
        self.flusher.add_side_rows("alert_events", [event.as_row(delivered)], key="event_id")

    def _update_budget_metrics(self, provider: str) -> None:
        spend = self.budget.spent_by(provider)
        self.metrics.budget_cost.labels(provider).set(spend.cost_usd)
        self.metrics.budget_tokens.labels(provider).set(spend.tokens)

    # -- flushing ----------------------------------------------------------------------
    async def _flush_loop(self) -> None:
        interval = self.config.daemon.flush_interval_s
        delay = interval
        last_heartbeat = time.monotonic()
        while not self._stopping:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._flush_wake.wait(), timeout=delay)
            self._flush_wake.clear()
            if self._stopping:
                break
            if time.monotonic() - last_heartbeat >= self.tuning.heartbeat_s:
                self._record_event("heartbeat", None)
                last_heartbeat = time.monotonic()
            outcome = await self.flush()
            interval = self.config.daemon.flush_interval_s
            if outcome.busy:
                delay = min(max(delay * 2, interval), self.tuning.flush_backoff_max_s)
            else:
                delay = interval

    async def flush(self) -> FlushOutcome:
        """Move the spool into the warehouse now (in a worker thread)."""
        outcome = await asyncio.to_thread(self.flusher.flush_once)
        self._account_flush(outcome)
        return outcome

    def _account_flush(self, outcome: FlushOutcome) -> None:
        self.stats.flushes += 1
        if outcome.busy:
            self.stats.busy_flushes += 1
        elif outcome.rows:
            self.stats.flushed_rows += outcome.inserted
            self.stats.flush_ms.append(outcome.seconds * 1000)
            self.metrics.flush_seconds.observe(outcome.seconds)
        self.metrics.spool_depth.set(outcome.depth)

    def _record_event(self, kind: str, detail: str | None) -> None:
        row = {
            "event_id": new_run_id(),
            "session_id": self.stats.session_id,
            "occurred_at": datetime.now(UTC),
            "kind": kind,
            "detail": detail,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "nerfwatch_version": version(),
        }
        self.flusher.add_side_rows("daemon_events", [row], key="event_id")

    # -- reload ------------------------------------------------------------------------
    async def _reload(self) -> None:
        path = self.config.path
        if path is None:
            log.warning("reload ignored: the running config did not come from a file")
            return
        loader = self._config_loader or _load_config
        try:
            new = await asyncio.to_thread(loader, path)
        except Exception as exc:  # any invalid config: keep running the old one
            log.error("config reload failed, keeping the running config: %s", exc)
            self._record_event("reload_failed", str(exc)[:500])
            return
        if new.warehouse != self.config.warehouse:
            log.warning("config reload: warehouse/spool changes take effect after a restart")
            new = _with_warehouse(new, self.config)
        old_d, new_d = self.config.daemon, new.daemon
        if (old_d.metrics_port, old_d.lock_wait_s) != (new_d.metrics_port, new_d.lock_wait_s):
            log.warning("config reload: metrics_port and lock_wait take effect after a restart")
        assert self._caps is not None
        self._caps.configure(new)
        self.budget.configure(new.budget)
        self.alerts.configure(new.alerts)
        self.config = new
        self._apply_jobs(job_specs(new))
        self._reschedule_report(new)
        log.info("config reloaded from %s: %d jobs", path, len(self._specs))
        self._record_event("reload", f"{len(self._specs)} jobs")

    # -- weekly report -----------------------------------------------------------------
    def _reschedule_report(self, config: Config) -> None:
        if not self.tuning.schedule_report or self._scheduler is None:
            return
        if not add_report_job(self._scheduler, config, self.run_weekly_report):
            with contextlib.suppress(JobLookupError):
                self._scheduler.remove_job(REPORT_JOB_ID)

    async def run_weekly_report(self) -> Path | None:
        """The weekly job: analysis, report, phase-change alerts and the report's link."""
        try:
            outcome = await asyncio.to_thread(analyse_and_render, self.config, self.reading())
        except Exception as exc:  # a report failure must not stop probing
            log.error("weekly report failed: %s: %s", type(exc).__name__, exc)
            return None
        log.info("weekly report written: %s", outcome.path)
        for change in outcome.phase_changes:
            await send_phase_alert(self.config.alerts, change.provider, change.phase, change.detail)
        await send_report_link(self.config.alerts, outcome.link)
        return outcome.path

    # -- shutdown ----------------------------------------------------------------------
    def _request_stop(self, reason: str) -> None:
        if not self._stop.is_set():
            log.info("stop requested (%s)", reason)
            self.stats.stop_reason = reason
            self._stop.set()

    async def _wait_for_stop(
        self, stop_after_s: float | None, stop_event: asyncio.Event | None
    ) -> None:
        waiters = [asyncio.ensure_future(self._stop.wait())]
        if stop_event is not None:
            waiters.append(asyncio.ensure_future(stop_event.wait()))
        try:
            done, _ = await asyncio.wait(
                waiters, timeout=stop_after_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for waiter in waiters:
                waiter.cancel()
        if not self.stats.stop_reason:
            self.stats.stop_reason = "stop_after" if not done else "stop_event"

    async def _shutdown(self) -> None:
        """Stop scheduling, grant in-flight probes a grace period, abort the rest, flush."""
        self._stopping = True
        self._flush_wake.set()
        if self._scheduler is not None and self._scheduler.running:
            self._scheduler.pause()
        grace = self.config.daemon.shutdown_grace_s
        if self._outstanding:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), timeout=grace)
        if self._inflight:
            log.warning("grace period over: aborting %d in-flight probes", len(self._inflight))
            for entry in list(self._inflight):
                if entry.phase != "persisting":
                    entry.task.cancel()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), timeout=10.0)
        if self._scheduler is not None and self._scheduler.running:
            self._scheduler.shutdown(wait=False)
        await self._drain_background()
        self._remove_signals()
        self._record_event("stop", self.stats.stop_reason)
        outcome = await self.flush()
        if outcome.busy:
            log.warning("final flush deferred: %d rows stay in the spool", self.spool.depth())
        self.stats.caps = self._caps.usage if self._caps else CapUsage()
        await self._release()
        self.stats.spool_depth = self.spool.depth()
        log.info(
            "daemon stopped (%s): %d done, %d skipped, %d aborted, spool depth %d",
            self.stats.stop_reason,
            self.stats.done,
            sum(self.stats.skipped.values()),
            self.stats.aborted,
            self.stats.spool_depth,
        )

    async def _release(self) -> None:
        """Close what ``_start`` opened (also after a failed start)."""
        self.spool.close()
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if self._workers is not None:
            await asyncio.to_thread(self._workers.close)
            self._workers = None
        self.metrics.close()

    async def _drain_background(self) -> None:
        """Wait for skipped-row writes and alert deliveries, then the flush loop."""
        while pending := {t for t in self._background if not t.done()}:
            await asyncio.wait(pending)
        if self._flush_task is not None:
            await self._flush_task

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _load_config(path: Path) -> Config:
    module = importlib.import_module("pipeline.config")
    config: Config = module.load_config(path)
    return config


def _with_warehouse(new: Config, old: Config) -> Config:
    from dataclasses import replace

    return replace(new, warehouse=old.warehouse)


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
