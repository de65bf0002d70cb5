"""Commands of the probe daemon: ``nerfwatch run`` and ``nerfwatch status``."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from pipeline.commands.common import CONFIG_OPTION, fail, load_or_fail
from pipeline.daemon import Daemon, DaemonError
from pipeline.daemon.logs import setup_logging
from pipeline.daemon.status import DaemonStatus, gather_status

__all__ = ["register"]

_LOG_LEVEL = typer.Option("INFO", "--log-level", help="DEBUG, INFO, WARNING or ERROR.")


def run(config: Path | None = CONFIG_OPTION, log_level: str = _LOG_LEVEL) -> None:
    """Run the configured probes on their schedules until SIGTERM/SIGINT (SIGHUP reloads)."""
    cfg = load_or_fail(config)
    if log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        fail(f"--log-level: expected DEBUG, INFO, WARNING or ERROR, got {log_level!r}", 2)
    setup_logging(log_level.upper())
    try:
        asyncio.run(Daemon(cfg).run())
    except DaemonError as exc:
        fail(str(exc), 1)


def _when(value: datetime | None) -> str:
    return f"{value:%Y-%m-%d %H:%M:%SZ}" if value else "-"


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
            f"{p.today_cost_usd:.4f}",
            f"{p.today_tokens:,}",
        )
    console.print(table)
    console.print(f"spool depth: {status.spool_depth} rows waiting for the warehouse")
    console.print(f"daemon: last event {status.last_event or 'none recorded'}")
    for note in status.notes:
        console.print(f"note: {note}")
    if status.warehouse_error:
        console.print(f"warehouse unavailable, spool only: {status.warehouse_error}")


def status(config: Path | None = CONFIG_OPTION) -> None:
    """Per provider: last probe, last error, today's spend; plus the spool depth."""
    cfg = load_or_fail(config, check_env=False)
    _print_status(gather_status(cfg))


def register(app: typer.Typer) -> None:
    """Add this module's commands to the ``nerfwatch`` app."""
    app.command("run")(run)
    app.command("status")(status)
