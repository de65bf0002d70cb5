"""The ``nerfwatch analyze`` command: run the analysis and record it under a new id."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import typer

from pipeline.commands.common import (
    CONFIG_OPTION,
    DB_OPTION,
    drift_dir,
    existing_warehouse,
    fail,
)
from pipeline.config.durations import DurationError, DurationTooLongError, parse_timedelta
from pipeline.warehouse import WarehouseError

__all__ = ["parse_since", "register"]

SOURCES = ("live", "synthetic")


def parse_since(text: str, now: datetime | None = None) -> datetime:
    """A date (2026-05-01), an ISO timestamp (UTC if no zone) or a look-back ("90d").

    A start after ``now`` is refused: it would record an analysis of no data at all.
    """
    now = now or datetime.now(UTC)
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        try:
            look_back = parse_timedelta(text)
        except DurationTooLongError:
            raise _before_year_1(text) from None
        except DurationError:
            raise ValueError(
                f'--since: expected a date, an ISO timestamp or a look-back such as "90d", '
                f"got {text!r}"
            ) from None
        return _look_back(text, look_back, now)
    start = value if value.tzinfo else value.replace(tzinfo=UTC)
    if start > now:
        raise ValueError(f"--since: {text!r} is in the future (now {now:%Y-%m-%d %H:%M} UTC)")
    return start


def _look_back(text: str, look_back: timedelta, now: datetime) -> datetime:
    """``now`` minus ``look_back``; past year 1 it is bad input, not a traceback."""
    try:
        return now - look_back
    except OverflowError:
        raise _before_year_1(text) from None


def _before_year_1(text: str) -> ValueError:
    return ValueError(f"--since: look-back {text!r} reaches before year 1")


def analyze(
    since: str | None = typer.Option(
        None, "--since", help='Analyse data from this date/time or look-back ("90d"); default: all.'
    ),
    source: str | None = typer.Option(
        None, "--source", help="Only rows from this source: live or synthetic (default: both)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed for bootstrap and permutation tests."),
    config: Path | None = CONFIG_OPTION,
    db: Path | None = DB_OPTION,
) -> None:
    """Find seasonality, change points, degradation phases, warning signs and release cycles."""
    from pipeline.analysis.orchestrate import run_analysis
    from pipeline.analysis.phase_changes import phase_changes_since

    try:
        start = parse_since(since) if since else None
    except ValueError as exc:
        fail(str(exc), 2)
    if source is not None and source not in SOURCES:
        fail(f"--source: expected one of {', '.join(SOURCES)}, got {source!r}", 2)
    warehouse = existing_warehouse(config, db)  # analysis adds tables, never a warehouse
    try:
        analysis_id = run_analysis(
            warehouse, since=start, source=source, seed=seed, drift_dir=drift_dir(config, db)
        )
        changes = phase_changes_since(warehouse, analysis_id)
    except WarehouseError as exc:
        fail(" ".join(str(exc).split()), 1)
    typer.echo(f"analysis {analysis_id} done")
    for ch in changes:
        typer.echo(
            f"phase change: {ch.provider}/{ch.model}: {ch.previous_stage or '-'} -> {ch.stage} "
            f"since {ch.since:%Y-%m-%d %H:%M} UTC"
        )


def register(app: typer.Typer) -> None:
    """Add ``analyze`` to the ``nerfwatch`` app."""
    app.command("analyze")(analyze)
