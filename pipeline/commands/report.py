"""The ``nerfwatch report`` command: render one week's HTML report and the index."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from pipeline.commands.common import (
    CONFIG_OPTION,
    DB_OPTION,
    cannot_write,
    config_if_any,
    existing_warehouse,
    expand_home_option,
    fail,
)
from pipeline.commands.new_folders import note_folder
from pipeline.warehouse import Warehouse, WarehouseError
from probes.secrets import Secrets

if TYPE_CHECKING:
    from pipeline.report.weeks import IsoWeek

__all__ = ["refuse_a_frozen_old_schema", "refuse_a_future_week", "register"]

DEFAULT_OUT = Path("nerfwatch-data/reports")


def report(
    week: str | None = typer.Option(
        None, "--week", "-w", help="ISO week such as 2026-W47 (default: the latest week)."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        help="Folder for the HTML files (default: the config's, else nerfwatch-data/reports).",
        callback=expand_home_option,
    ),
    config: Path | None = CONFIG_OPTION,
    db: Path | None = DB_OPTION,
) -> None:
    """Render the weekly HTML report (one self-contained file) and print its path."""
    # imported here: charts and statistics take a second to load, and every other
    # command (``nerfwatch sql`` in a loop) would pay it at start-up
    from pipeline.report import parse_week, render_report

    try:
        chosen = parse_week(week) if week else None
    except ValueError as exc:
        fail(f"--week: {exc}", 2)
    if chosen is not None:
        refuse_a_future_week(chosen, datetime.now(UTC))
    warehouse = existing_warehouse(config, db)
    refuse_a_frozen_old_schema(warehouse)
    cfg = config_if_any(config)
    out_dir = out or (cfg.report.out_dir if cfg else DEFAULT_OUT)
    note_folder(out_dir)
    secrets = Secrets(cfg.secret_values() if cfg else ())  # keys echoed into stored text
    try:
        path = render_report(warehouse, out_dir, week=chosen, secrets=secrets)
    except WarehouseError as exc:
        fail(str(exc), 1)
    except OSError as exc:
        cannot_write("--out" if out else "report folder", out_dir, exc)
    typer.echo(str(path))


def refuse_a_frozen_old_schema(warehouse: Warehouse) -> None:
    """Exit 1 if the warehouse is of an older schema and cannot be upgraded (a read-only
    mount, an archived copy): the report needs tables the old schema lacks, and failed on
    the first one with a catalog error. ``nerfwatch sql`` still reads such a file."""
    try:
        behind = warehouse.frozen_behind()
    except WarehouseError as exc:
        fail(str(exc), 1)
    if behind is not None:
        found, needed = behind
        fail(
            f"warehouse {warehouse.where} has schema version {found}, this nerfwatch needs "
            f"{needed}, and it cannot be written to upgrade it; copy it somewhere writable "
            "and run `nerfwatch report --db COPY` (`nerfwatch sql` reads it as it stands)",
            1,
        )


def refuse_a_future_week(week: IsoWeek, now: datetime) -> None:
    """Exit 2 if ``week`` has not begun at ``now``: its report would be an empty page
    written beside the real ones and listed in the index."""
    if week.start > now:
        starts = f"it starts {week.start:%Y-%m-%d}, now is {now:%Y-%m-%d %H:%M} UTC"
        fail(f"--week: {week.label} has not begun ({starts})", 2)


def register(app: typer.Typer) -> None:
    """Add ``report`` to the ``nerfwatch`` app."""
    app.command("report")(report)
