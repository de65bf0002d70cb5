"""``nerfwatch warehouse migrate`` (copy the warehouse to the other backend) and
``maintain`` (compact a lake)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import typer

from pipeline.commands.common import (
    CONFIG_OPTION,
    DB_OPTION,
    existing_warehouse,
    expand_home_option,
    fail,
    require_warehouse,
    warehouse_location,
)
from pipeline.commands.new_folders import note_folder
from pipeline.config.durations import DurationError, parse_timedelta
from pipeline.warehouse import Lake, LakeSpecError, WarehouseError
from pipeline.warehouse.maintenance import maintain as maintain_lake
from pipeline.warehouse.maintenance import this_process
from pipeline.warehouse.transfer import copy_warehouse

__all__ = ["register"]

_MAX_KEEP = timedelta(days=36_500)  # a century: longer is "forever" for snapshots

warehouse_app = typer.Typer(
    help="Move the warehouse between backends (migrate) and compact a lake (maintain).",
    no_args_is_help=True,
    add_completion=False,
)


@warehouse_app.command("migrate")
def migrate(
    to: str = typer.Option(..., "--to", help="duckdb (a file) or ducklake (a lake)."),
    catalog: str | None = typer.Option(
        None, "--catalog", help='--to ducklake: "sqlite:PATH" or "postgres:<conninfo>".'
    ),
    data_path: str | None = typer.Option(
        None, "--data-path", help="--to ducklake: a folder or s3://bucket/prefix."
    ),
    path: Path | None = typer.Option(
        None, "--path", help="--to duckdb: the file to write.", callback=expand_home_option
    ),
    config: Path | None = CONFIG_OPTION,
    db: Path | None = DB_OPTION,
) -> None:
    """Copy every table from the configured warehouse (or --db) into the other backend.

    Idempotent and resumable: rows already in the target are skipped, so run it again
    after an interruption, or to catch up. Each table is then verified by its keys.
    S3 settings come from AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID and
    AWS_SECRET_ACCESS_KEY. Point the config at the target afterwards.
    """
    source, origin = warehouse_location(config, db)
    target = _target(to, catalog, data_path, path)
    require_warehouse(source, origin)  # before the target is created
    for folder in [target.parent] if isinstance(target, Path) else target.local_paths():
        note_folder(folder)  # removed again if the copy fails and leaves them empty
    if type(source) is type(target) and source == target:
        fail("the target is the warehouse itself", 2)
    try:
        copies = copy_warehouse(source, target)
    except WarehouseError as exc:
        fail(f"{origin}: {exc}")
    for copy in copies:
        typer.echo(
            f"{copy.table}: {copy.source_rows:,} rows in the source, {copy.target_rows:,} in "
            f"the target ({copy.copied:,} copied now)"
            + (f"; {copy.missing:,} MISSING" if copy.missing else "")
        )
    missing = sum(copy.missing for copy in copies)
    if missing:
        fail(f"{missing:,} source rows are missing from the target")
    typer.echo(f"verified: every row of {len(copies)} tables is in {_name(target)}")


@warehouse_app.command("maintain")
def maintain(
    keep: str = typer.Option("7d", "--keep", help="Keep snapshots (time travel) this long."),
    config: Path | None = CONFIG_OPTION,
    db: Path | None = DB_OPTION,
) -> None:
    """Compact the configured lake: flush inlined rows, remove duplicate keys, merge small
    files, expire snapshots older than --keep and delete their files. One at a time
    across all sites (a lease); writers keep writing meanwhile."""
    kept = _keep(keep)
    warehouse = existing_warehouse(config, db)
    try:
        done = maintain_lake(warehouse, holder=this_process(), keep=kept)
    except WarehouseError as exc:
        fail(str(exc))
    finally:
        warehouse.close()
    if done.skipped is not None:
        typer.echo(f"nothing done: {done.skipped}")
        return
    for step in done.steps:
        typer.echo(step)
    typer.echo(f"duplicate rows removed: {done.duplicates_removed}")


def _keep(text: str) -> timedelta:
    """--keep as a timedelta; capped, so the lake's "now() - keep" stays a real date and a
    huge value is refused before any step runs rather than failing halfway."""
    try:
        kept = parse_timedelta(text)
    except DurationError as exc:
        fail(f"--keep: {exc}", 2)
    if kept > _MAX_KEEP:
        fail(f"--keep: expected at most {_MAX_KEEP.days}d, got {text!r}", 2)
    return kept


def _target(to: str, catalog: str | None, data_path: str | None, path: Path | None) -> Path | Lake:
    if to == "duckdb":
        if path is None:
            fail("--to duckdb needs --path FILE", 2)
        return path
    if to != "ducklake":
        fail(f'--to: expected "duckdb" or "ducklake", got {to!r}', 2)
    if catalog is None or data_path is None:
        fail("--to ducklake needs --catalog and --data-path", 2)
    try:
        return Lake(catalog, data_path)
    except LakeSpecError as exc:
        fail(f"--catalog/--data-path: {exc}", 2)


def _name(target: Path | Lake) -> str:
    return target.where if isinstance(target, Lake) else str(target)


def register(app: typer.Typer) -> None:
    """Add ``nerfwatch warehouse`` to the ``nerfwatch`` app."""
    app.add_typer(warehouse_app, name="warehouse")
