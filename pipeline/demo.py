"""``nerfwatch demo``: the whole pipeline on simulated providers, ending in a report.

Simulator on loopback → six months of synthetic history (and three weeks of drift samples
of fixed questions) → the real daemon probing the
simulator for about a minute → analysis → the weekly report. No config, no keys. Every
stage is the production code path; the only shortcut is a faster probe schedule.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from pipeline.analysis.orchestrate import run_analysis
from pipeline.config import Config, default_config
from pipeline.config.writer import write_demo_config
from pipeline.daemon import DaemonTuning, run_daemon
from pipeline.drift.synthetic import write_demo_baselines
from pipeline.report.render import render_report
from pipeline.report.weeks import IsoWeek
from pipeline.warehouse import Warehouse
from probes.simulator import configure, running
from probes.simulator.store import write_history

__all__ = ["DemoError", "DemoOptions", "DemoProgress", "DemoResult", "run_demo"]

MARKER = ".nerfwatch-demo"  # a folder with this file may be wiped and rebuilt by the demo

Advance = Callable[[float], None]


class DemoError(Exception):
    """The demo cannot run; ``exit_code`` 2 means bad input, 1 anything else."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class DemoProgress(Protocol):
    """How the demo reports progress: one step at a time, optionally with a total."""

    def step(self, title: str, total: float | None = None) -> AbstractContextManager[Advance]: ...


@dataclass(frozen=True, slots=True)
class DemoOptions:
    directory: Path = Path("nerfwatch-data")
    days: float = 180.0  # synthetic history
    live_seconds: float = 60.0  # the daemon's live run against the simulator
    speed: float = 30.0  # probe intervals are divided by this during the live run


@dataclass(frozen=True, slots=True)
class DemoResult:
    report: Path
    history_rows: int
    live_rows: int
    elapsed_s: float


class SilentProgress:
    """Progress that shows nothing (library use, tests)."""

    @contextmanager
    def step(self, title: str, total: float | None = None) -> Iterator[Advance]:
        del title, total
        yield lambda _done: None


def _reusable(directory: Path) -> bool:
    """True when ``directory`` is absent, empty or an earlier demo's; else a DemoError."""
    if directory.exists() and not directory.is_dir():
        raise DemoError(f"--dir: {directory} is a file, not a folder", exit_code=2)
    if not directory.exists() or not any(directory.iterdir()):
        return False
    if not (directory / MARKER).exists():
        raise DemoError(
            f"--dir: {directory} is not empty and was not made by nerfwatch demo; "
            "choose another folder",
            exit_code=2,
        )
    return True


def _prepare(directory: Path, wipe: bool) -> None:
    """Start from an empty folder (only an earlier demo's folder is ever wiped)."""
    if wipe:
        shutil.rmtree(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / MARKER).write_text("made by nerfwatch demo; safe to delete\n", encoding="utf-8")


async def _live(config: Config, seconds: float, advance: Advance) -> int:
    """Run the daemon for ``seconds`` while ticking the progress bar."""
    started = time.monotonic()

    async def tick() -> None:
        while True:
            await asyncio.sleep(0.25)
            advance(min(seconds, time.monotonic() - started))

    ticker = asyncio.create_task(tick())
    try:
        tuning = DaemonTuning(install_signals=False, schedule_report=False)
        stats = await run_daemon(config, stop_after_s=seconds, tuning=tuning)
    finally:
        ticker.cancel()
    advance(seconds)
    return stats.rows


def run_demo(options: DemoOptions, progress: DemoProgress | None = None) -> DemoResult:
    """Run every stage and return where the report is."""
    show = progress or SilentProgress()
    started = time.monotonic()
    wipe = _reusable(options.directory)
    _prepare(options.directory, wipe)
    scenario = configure(None)
    with ExitStack() as stack:
        with show.step("Starting the simulator"):
            sim = stack.enter_context(running(scenario))
        config = default_config(
            sim.base_url, scenario.providers, options.directory, speed=options.speed
        )
        write_demo_config(options.directory, sim.base_url, scenario.providers)  # for --config
        warehouse = Warehouse(config.warehouse.location)
        with show.step(f"Writing {options.days:g} days of synthetic history"):
            history = write_history(warehouse, scenario, days=options.days)
        with show.step("Sampling fixed questions for 21 days (border inputs, logprobs)"):
            write_demo_baselines(scenario, config.warehouse.path.parent, datetime.now(UTC).date())
        with show.step(
            f"Probing the simulator live for {options.live_seconds:g} s", options.live_seconds
        ) as advance:
            live_from = datetime.now(UTC)
            live = asyncio.run(_live(config, options.live_seconds, advance))
            live_middle = live_from + (datetime.now(UTC) - live_from) / 2
    with show.step("Analyzing (seasonality, change points, phases, release cycle)"):
        run_analysis(warehouse)
    with show.step("Rendering the weekly report"):
        # The week of the live run, whatever the weekday: on a Monday the default week
        # is the one that just ended, which holds none of the live probes. A run across
        # midnight into Monday is reported with the week that holds most of it.
        week = IsoWeek.containing(live_middle)
        report = render_report(warehouse, config.report.out_dir, week=week)
    return DemoResult(report, history.rows, live, time.monotonic() - started)
