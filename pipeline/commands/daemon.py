"""Commands of the probe daemon: ``nerfwatch run`` and ``nerfwatch status``."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from pipeline.commands.common import (
    CONFIG_OPTION,
    DB_OPTION,
    config_if_any,
    fail,
    load_or_fail,
    missing_warehouse,
    warehouse_location,
)
from pipeline.config import Config, WarehouseConfig
from pipeline.daemon import Daemon, DaemonError
from pipeline.daemon.logs import setup_logging
from pipeline.daemon.spool import pending_lines
from pipeline.daemon.status import DaemonStatus, gather_status
from pipeline.warehouse import Lake
from pipeline.warehouse.errors import NewerFile

__all__ = ["register"]

_LOG_LEVEL = typer.Option("INFO", "--log-level", help="DEBUG, INFO, WARNING or ERROR.")


def run(config: Path | None = CONFIG_OPTION, log_level: str = _LOG_LEVEL) -> None:
    """Run the configured probes on their schedules until SIGTERM/SIGINT (SIGHUP reloads)."""
    cfg = load_or_fail(config)
    if log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        fail(f"--log-level: expected DEBUG, INFO, WARNING or ERROR, got {log_level!r}", 2)
    setup_logging(log_level.upper(), secrets=cfg.secret_values())
    try:
        asyncio.run(Daemon(cfg).run())
    except DaemonError as exc:
        fail(str(exc), exc.exit_code)


def _when(value: datetime | None) -> str:
    return f"{value:%Y-%m-%d %H:%M:%SZ}" if value else "-"


def _spend(total: float, worst_case: float, in_flight: float) -> str:
    """Today's dollars as the budget counts them, the worst-case and in-flight parts named."""
    parts = [f"{worst_case:.4f} at most"] if worst_case else []
    parts += [f"{in_flight:.4f} in flight"] if in_flight else []
    return f"{total:.4f} ({', '.join(parts)})" if parts else f"{total:.4f}"


def _tokens(total: int, in_flight: int) -> str:
    return f"{total:,} ({in_flight:,} in flight)" if in_flight else f"{total:,}"


def _print_status(status: DaemonStatus) -> None:
    console = Console(width=None if Console().is_terminal else 160)
    table = Table(title="nerfwatch status", title_justify="left")
    for column in ("provider", "last probe", "result", "last error", "at", "today $", "tokens"):
        table.add_column(column, justify="right" if column in ("today $", "tokens") else "left")
    for p in status.providers:
        table.add_row(
            p.provider,
            _when(p.last_probe_at),
            p.last_error_class or "-",
            (p.last_error or "-")[:60],
            _when(p.last_error_at),
            _spend(p.today_cost_usd, p.today_worst_case_usd, p.today_reserved_usd),
            _tokens(p.today_tokens, p.today_reserved_tokens),
        )
    console.print(table)
    if status.spend_of_every_site:
        console.print(
            'today $ and tokens are every site\'s on the lake (budget.scope = "lake");'
            " the other columns are this site's"
        )
    if any(p.today_worst_case_usd for p in status.providers):
        console.print(
            "today $ is what the budget counts: runs billed without usage (cut off by a"
            " shutdown mid-probe, or no usage reported) at their worst case, marked 'at most'"
        )
    if any(p.today_reserved_usd or p.today_reserved_tokens for p in status.providers):
        console.print(
            "today $ and tokens include the runs in flight at their worst case, as the budget"
            " holds them reserved until their rows are stored, marked 'in flight'"
        )
    console.print(f"spool depth: {status.spool_depth} rows waiting for the warehouse")
    if status.quarantined:
        console.print(
            f"quarantined: {status.quarantined} spool lines could not be stored"
            " (see table quarantined_rows)"
        )
    if status.rows_lost:
        console.print(f"lost: {status.rows_lost} results could not be spooled (disk errors)")
    console.print(f"daemon: last event {status.last_event or 'none recorded'}")
    for note in status.notes:
        console.print(f"note: {note}")
    if status.warehouse_error:
        console.print(f"warehouse unavailable, spool only: {status.warehouse_error}")


def _status_config(config: Path | None, location: Path | Lake) -> Config:
    """The config's providers and spool with the warehouse at ``location``; without a
    config, the providers found in the warehouse and the spool beside it (the layout
    ``init`` and ``demo`` use)."""
    cfg = config_if_any(config)
    if cfg is not None:
        if isinstance(location, Lake):
            return replace(cfg, warehouse=replace(cfg.warehouse, lake=location))
        return replace(cfg, warehouse=replace(cfg.warehouse, path=location, lake=None))
    assert isinstance(location, Path)  # a lake is only ever named by a config
    return Config(
        None, WarehouseConfig(location, location.parent / "spool"), providers=(), probes=()
    )


def status(config: Path | None = CONFIG_OPTION, db: Path | None = DB_OPTION) -> None:
    """Per provider: last probe, last error, today's spend; plus the spool depth."""
    location, origin = warehouse_location(config, db)
    cfg = _status_config(config, location)
    if isinstance(location, Lake):
        found, named = location.catalog_exists(), location.where
    else:
        found, named = location.is_file(), str(location)
    if not found and pending_lines(cfg.warehouse.spool_dir) == 0:
        missing_warehouse(named, origin)  # nothing flushed and nothing waiting: a wrong path
    try:
        gathered = gather_status(cfg)
    except NewerFile as exc:  # a file no wait will open (a busy one is reported in the table)
        fail(str(exc))
    _print_status(gathered)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``nerfwatch`` app."""
    app.command("run")(run)
    app.command("status")(status)
