"""The ``nerfwatch demo`` command: the whole pipeline on simulated providers."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from pipeline.commands.common import cannot_write, expand_home_option, fail
from pipeline.commands.new_folders import note_folder

if TYPE_CHECKING:
    from pipeline.demo import Advance

__all__ = ["register"]


class _RichProgress:
    """One line per step: spinner, title, a bar when the step has a total, elapsed time."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress

    @contextmanager
    def step(self, title: str, total: float | None = None) -> Iterator[Advance]:
        task = self._progress.add_task(title, total=total)
        yield lambda done: self._progress.update(task, completed=done)
        self._progress.update(task, total=total or 1, completed=total or 1)
        self._progress.stop_task(task)


def demo(
    directory: Path = typer.Option(
        Path("nerfwatch-data"),
        "--dir",
        help="Working folder (rebuilt on every demo run).",
        callback=expand_home_option,
    ),
    days: float = typer.Option(180.0, "--days", min=1, help="Days of synthetic history."),
    live_seconds: float = typer.Option(
        60.0, "--live-seconds", min=1, help="How long the daemon probes the simulator live."
    ),
    speed: float = typer.Option(
        30.0, "--speed", min=1, help="Divide probe intervals by this during the live run."
    ),
) -> None:
    """Run everything on simulated providers (no config, no keys) and print the report path."""
    from pipeline.demo import DemoError, DemoOptions, run_demo  # heavy: see report.py

    console = Console(stderr=True)
    # Overrun skips are recorded as rows; their scheduler warnings would break the bars.
    logging.getLogger("apscheduler").setLevel(logging.ERROR)
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    options = DemoOptions(directory, days, live_seconds, speed)
    note_folder(directory)
    try:
        with Progress(*columns, console=console) as progress:
            result = run_demo(options, _RichProgress(progress))
    except DemoError as exc:
        fail(str(exc), exc.exit_code)
    except OSError as exc:
        _os_failure(directory, exc)
    console.print(
        f"{result.history_rows:,} synthetic and {result.live_rows:,} live probes, "
        f"{result.elapsed_s:.0f} s. Report:"
    )
    typer.echo(str(result.report.resolve()))


def _os_failure(directory: Path, exc: OSError) -> NoReturn:
    """One line for a file-system failure: naming --dir when it is the working folder's
    (read-only, under a file, a full disk), else the file the system refused."""
    where = Path(exc.filename) if exc.filename else None
    if where is None or where == directory or directory in where.parents:
        cannot_write("--dir", directory, exc)
    fail(f"demo stopped: {where}: {exc.strerror or type(exc).__name__}", 1)


def register(app: typer.Typer) -> None:
    """Add ``demo`` to the ``nerfwatch`` app."""
    app.command("demo")(demo)
