"""What the daemon builds and reads before its first run: the flush writer, the metrics
endpoint, and a warm start from the warehouse (migrations, the spool replayed, today's
spend, open alerts, learned chars-per-token), all best effort so a busy or missing
warehouse never stops probing."""

from __future__ import annotations

import asyncio
import logging

from pipeline.config import Config
from pipeline.daemon import state
from pipeline.daemon.alerts import AlertEvaluator
from pipeline.daemon.budget import BudgetGuard
from pipeline.daemon.contract import DaemonError, DaemonTuning
from pipeline.daemon.flush import Flusher, FlushProcess, RowWriter, SegmentWriter
from pipeline.daemon.metrics import Metrics
from pipeline.daemon.spool import Spool
from pipeline.warehouse import Warehouse, WarehouseError
from pipeline.warehouse.migrations import NewerSchema
from probes.sizing import CharsPerToken

__all__ = ["row_writer", "serve_metrics", "warm_start"]

log = logging.getLogger("nerfwatch.daemon")


def row_writer(config: Config, tuning: DaemonTuning) -> RowWriter:
    """The flush process, or (tuning) a writer in the flush thread of this process."""
    warehouse, spool_dir = config.warehouse.location, config.warehouse.spool_dir
    lock_wait_s = config.daemon.lock_wait_s
    if tuning.flush_process:
        return FlushProcess(
            warehouse,
            lock_wait_s=lock_wait_s,
            spool_dir=spool_dir,
            reply_timeout_s=tuning.flush_reply_timeout_s,
        )
    # resident: the file is attached per flush (~2 ms) instead of opened (~12 ms)
    resident = Warehouse(warehouse, lock_wait_s=lock_wait_s, resident=True)
    return SegmentWriter(resident, spool_dir)


def serve_metrics(metrics: Metrics, config: Config) -> int | None:
    """Serve ``/metrics`` on ``[daemon].metrics_port`` (if set); return the bound port.

    A port that cannot be had is bad input (exit status 2), named by its config key.
    """
    port = config.daemon.metrics_port
    if port is None:
        return None
    try:
        return metrics.serve(port)
    except OSError as exc:
        where = f"{config.path}: " if config.path else ""
        raise DaemonError(
            f"{where}daemon.metrics_port: cannot listen on 127.0.0.1:{port} ({exc.strerror})",
            exit_code=2,
        ) from exc


async def warm_start(
    config: Config,
    *,
    flusher: Flusher,
    spool: Spool,
    budget: BudgetGuard,
    alerts: AlertEvaluator,
) -> dict[str, CharsPerToken]:
    """Migrate, replay the spool, give the budget its reader of stored spend (today's
    read now) and restore open alerts; return each provider's chars-per-token estimator."""
    patient = Warehouse(config.warehouse.location)  # startup may wait for a reader
    try:
        await asyncio.to_thread(patient.migrate)
    except WarehouseError as exc:
        if isinstance(exc.__cause__, NewerSchema):  # no flush could ever store a row
            raise DaemonError(f"{patient.where}: {exc}") from exc
        log.warning("warehouse not migrated yet (%s); will retry at flush", exc)
    outcome = await asyncio.to_thread(flusher.flush_once)
    if outcome.rows:
        log.info("spool replay: %d rows, %d new", outcome.rows, outcome.inserted)
    # today's spend now, any other day's when the budget first meets it (a clock step)
    site = config.warehouse.own_site
    budget.load_day = state.DaySpend(patient, spool, site=site, paused=flusher.paused)
    if config.budget.scope == "lake" and site is not None:  # one key, one bill: all sites
        budget.load_others = state.OtherSitesSpend(patient, site)
    await budget.prepare()
    try:
        open_alerts = await asyncio.to_thread(state.open_alerts, patient)
        learned = await asyncio.to_thread(state.learned_chars_per_token, patient)
    except WarehouseError as exc:
        log.warning("could not read open alerts and prompt sizing from the warehouse: %s", exc)
        open_alerts, learned = set(), {}
    alerts.restore_open(open_alerts)
    return {p.name: CharsPerToken(p.chars_per_token, learned.get(p.name)) for p in config.providers}
