"""Commands of the foundation: init, config check, sql, releases."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import typer
from rich.console import Console
from rich.table import Table

from pipeline.atomic_files import write_text_atomically
from pipeline.commands.common import (
    CONFIG_OPTION,
    DB_OPTION,
    cannot_write,
    existing_warehouse,
    expand_home_option,
    fail,
    load_or_fail,
    refuse_a_missing_name_with_a_space,
    warehouse_from,
)
from pipeline.config.plan import budget_warnings, format_runs, plan_rows, provider_totals
from pipeline.config.starter import STARTER_CONFIG
from pipeline.releases import (
    Release,
    ReleaseError,
    add_release,
    import_releases,
    known_vendors,
    list_releases,
    parse_release,
    utc_today,
)
from pipeline.warehouse import SqlError, WarehouseError
from pipeline.warehouse.queries import QueryError, canned_queries, resolve_sql
from pipeline.warehouse.sql_output import FORMATS, write_frame

__all__ = ["register"]

RELEASE_FORMATS = ("table", "csv", "json")  # the calendar prints; parquet needs --out

config_app = typer.Typer(
    help="Validate the configuration and show what it will do.", no_args_is_help=True
)
releases_app = typer.Typer(
    help="The model-release calendar: list, add, import.", no_args_is_help=True
)


def init(
    path: Path = typer.Argument(
        Path("nerfwatch.toml"), help="Where to write the config.", callback=expand_home_option
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing file."),
) -> None:
    """Write a commented starter config with presets for common providers."""
    if path.exists() and not force:
        fail(f"{path} already exists (use --force to overwrite)", 2)
    try:  # whole or not at all: a full disk must not leave half a config behind
        write_text_atomically(path, STARTER_CONFIG)
    except OSError as exc:
        fail(f"{path}: cannot write the config ({exc.strerror or exc})", 2)
    typer.echo(f"wrote {path}; next: nerfwatch config check --config {path}")


@config_app.command("check")
def config_check(
    config: Path | None = CONFIG_OPTION,
    no_env: bool = typer.Option(False, "--no-env", help="Do not require API-key variables."),
) -> None:
    """Validate the config and print the plan: probes, schedules, tokens and cost per day."""
    cfg = load_or_fail(config, check_env=not no_env)
    console = Console(width=None if Console().is_terminal else 160)
    table = Table(title=f"Plan for {cfg.path}", title_justify="left")
    for column in (
        "provider",
        "probe",
        "task",
        "prompt",
        "schedule",
        "runs/day",
        "≤ tokens/day",
        "≤ USD/day",
    ):
        table.add_column(column, justify="right" if "/" in column or column == "prompt" else "left")
    for row in plan_rows(cfg):
        table.add_row(
            row.provider,
            row.probe,
            row.task,
            f"{row.prompt_tokens:,}",
            row.schedule,
            format_runs(row.runs_per_day),
            f"{row.tokens_per_day:,.0f}",
            f"{row.cost_per_day_usd:,.2f}",
        )
    console.print(table)
    for total in provider_totals(cfg):
        cap = f" (cap {total.cap_cost_usd:.2f} USD)" if total.cap_cost_usd else ""
        console.print(
            f"{total.provider}: {format_runs(total.runs_per_day)} runs/day, "
            f"≤ {total.tokens_per_day:,.0f} tokens/day, "
            f"≤ {total.cost_per_day_usd:,.2f} USD/day{cap}"
        )
    from pipeline.drift.cost import drift_costs  # scipy: only when planning

    for drift in drift_costs(cfg, cfg.warehouse.path.parent):
        console.print(
            f"{drift.provider}: drift sampling of {drift.model}, {drift.calls_per_day} "
            f"one-token calls/day, ≤ {drift.tokens_per_day:,} tokens/day, "
            f"≤ {drift.cost_per_day_usd:,.4f} USD/day (nerfwatch drift sample)"
        )
    budget = cfg.budget.total
    if budget.daily_cost_usd or budget.daily_tokens:
        cost = f"{budget.daily_cost_usd:,.2f}" if budget.daily_cost_usd else "-"
        tokens = f"{budget.daily_tokens:,}" if budget.daily_tokens else "-"
        console.print(f"daily budget: {cost} USD, {tokens} tokens (probes beyond it are skipped)")
    for warning in budget_warnings(cfg):
        typer.echo(f"warning: {warning}")  # one line each, never wrapped
    lake = cfg.warehouse.lake  # a lake's plan names the lake and this site, not a file
    where = f"{lake.where}, as probe site {cfg.warehouse.site}" if lake else cfg.warehouse.path
    console.print(f"warehouse: {where}; spool: {cfg.warehouse.spool_dir}")
    console.print("config OK")


def sql(
    query: str = typer.Argument(
        None, help="SQL text, a .sql file, or the name of a canned query (see --list)."
    ),
    fmt: str = typer.Option("table", "--format", "-f", help="table, csv, json or parquet."),
    out: Path | None = typer.Option(
        None,
        "--out",
        "-o",
        help="Write to a file (needed for parquet).",
        callback=expand_home_option,
    ),
    list_queries: bool = typer.Option(False, "--list", help="List the canned queries."),
    config: Path | None = CONFIG_OPTION,
    db: Path | None = DB_OPTION,
) -> None:
    """Run SQL against the warehouse (read-only; safe while the daemon runs)."""
    if list_queries:
        for name, answers in canned_queries().items():
            typer.echo(f"{name:28} {answers}")
        return
    if fmt not in FORMATS:
        fail(f"--format: expected one of {', '.join(FORMATS)}, got {fmt!r}", 2)
    if query is None:
        fail("give SQL text, a .sql file or a canned query name (see --list)", 2)
    if fmt == "parquet" and out is None:
        fail("--format parquet needs --out FILE", 2)
    warehouse = existing_warehouse(config, db)
    try:
        frame = warehouse.query(resolve_sql(query))
    except (QueryError, SqlError, ValueError) as exc:
        fail(str(exc), 2)
    except (WarehouseError, OSError) as exc:
        fail(" ".join(str(exc).split()), 1)
    try:
        write_frame(frame, fmt, out)
    except OSError as exc:
        if out is None:
            fail(" ".join(str(exc).split()), 1)
        cannot_write("--out", out, exc)
    except pl.exceptions.PolarsError as exc:
        fail(" ".join(str(exc).split()), 1)


@releases_app.command("list")
def releases_list(
    vendor: str | None = typer.Option(None, "--vendor", help="Only this vendor."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, csv or json."),
    config: Path | None = CONFIG_OPTION,
    db: Path | None = DB_OPTION,
) -> None:
    """List known model releases, newest first."""
    if fmt not in RELEASE_FORMATS:  # checked before the warehouse: bad input is not a traceback
        fail(f"--format: expected one of {', '.join(RELEASE_FORMATS)}, got {fmt!r}", 2)
    warehouse = existing_warehouse(config, db)
    try:
        write_frame(list_releases(warehouse, vendor), fmt, None)
    except ReleaseError as exc:
        fail(f"--vendor: {exc}", 2)
    except WarehouseError as exc:
        fail(str(exc))


@releases_app.command("add")
def releases_add(
    vendor: str = typer.Argument(..., help="Vendor, e.g. OpenAI."),
    model: str = typer.Argument(..., help="Model name, e.g. GPT-6."),
    release_date: str = typer.Argument(..., help="Release date, YYYY-MM-DD."),
    kind: str = typer.Option("major", help="major, minor, open-weights, ..."),
    source_url: str | None = typer.Option(None, "--source", help="Where this is documented."),
    confidence: str = typer.Option("medium", help="high, medium or low."),
    new_vendor: bool = typer.Option(False, "--new-vendor", help="Accept a vendor not seen yet."),
    config: Path | None = CONFIG_OPTION,
    db: Path | None = DB_OPTION,
) -> None:
    """Add one release to the calendar."""
    warehouse = warehouse_from(config, db)  # opened lazily: a refused row creates no file
    raw: dict[str, str | None] = {
        "vendor": vendor,
        "model": model,
        "release_date": release_date,
        "kind": kind,
        "source_url": source_url,
        "confidence": confidence,
    }
    try:
        release: Release = parse_release(
            raw, "release", known_vendors(warehouse), allow_new_vendor=new_vendor
        )
        add_release(warehouse, release)
    except ReleaseError as exc:
        fail(str(exc), 2)
    except WarehouseError as exc:
        fail(str(exc))
    typer.echo(f"recorded {release.vendor} {release.model} on {release.release_date}")


@releases_app.command("import")
def releases_import(
    file: Path = typer.Argument(
        ...,
        help="CSV with vendor,model,release_date[,kind,source_url,confidence].",
        callback=expand_home_option,
    ),
    new_vendor: bool = typer.Option(False, "--new-vendor", help="Accept vendors not seen yet."),
    config: Path | None = CONFIG_OPTION,
    db: Path | None = DB_OPTION,
) -> None:
    """Import releases from a CSV; every row is checked before any is written."""
    refuse_a_missing_name_with_a_space(file)
    try:
        added = import_releases(warehouse_from(config, db), file, allow_new_vendor=new_vendor)
    except ReleaseError as exc:
        fail(str(exc), 2)
    except WarehouseError as exc:
        fail(str(exc))
    typer.echo(f"imported {added} new release(s) from {file} ({utc_today()} UTC)")


def register(app: typer.Typer) -> None:
    """Add the foundation commands to the ``nerfwatch`` app."""
    app.command("init")(init)
    app.add_typer(config_app, name="config")
    app.command("sql")(sql)
    app.add_typer(releases_app, name="releases")
