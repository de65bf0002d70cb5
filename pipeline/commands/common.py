"""Helpers every command shares: where the warehouse is, and how a failure is printed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import typer

from pipeline.config import ConfigError, load_config
from pipeline.config_types import Config
from pipeline.warehouse import Warehouse

__all__ = [
    "CONFIG_OPTION",
    "DB_OPTION",
    "DEFAULT_CONFIG",
    "DEFAULT_DB",
    "fail",
    "load_or_fail",
    "warehouse_from",
]

DEFAULT_CONFIG = Path("nerfwatch.toml")
DEFAULT_DB = Path("nerfwatch-data/nerfwatch.duckdb")

CONFIG_OPTION = typer.Option(
    None, "--config", "-c", help="Config file (default: ./nerfwatch.toml if present)."
)
DB_OPTION = typer.Option(
    None,
    "--db",
    help="Warehouse file; overrides the config (default: the config's, else "
    "nerfwatch-data/nerfwatch.duckdb).",
)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one line to stderr and exit: 2 for bad input, 1 for other failures."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def load_or_fail(path: Path | None, *, check_env: bool = True) -> Config:
    """Load the given config (or ./nerfwatch.toml); bad input exits with status 2."""
    try:
        return load_config(path or DEFAULT_CONFIG, check_env=check_env)
    except ConfigError as exc:
        fail(str(exc), 2)


def warehouse_from(config: Path | None, db: Path | None) -> Warehouse:
    """The warehouse a command should use: --db, else the config's, else the default.

    ``NERFWATCH_LOCK_WAIT_S`` sets how long to wait for another process's lock (default 10).
    """
    wait = float(os.environ.get("NERFWATCH_LOCK_WAIT_S", "10"))
    if db is not None:
        return Warehouse(db, lock_wait_s=wait)
    if config is not None or DEFAULT_CONFIG.exists():
        return Warehouse(load_or_fail(config, check_env=False).warehouse.path, lock_wait_s=wait)
    return Warehouse(DEFAULT_DB, lock_wait_s=wait)
