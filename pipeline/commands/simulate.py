"""``nerfwatch simulate``: run the provider simulator, or write synthetic history."""

from __future__ import annotations

import dataclasses
import math
from datetime import UTC, datetime
from pathlib import Path

import typer

from pipeline.commands.common import (
    expand_home_option,
    fail,
    refuse_a_missing_name_with_a_space,
    warehouse_location,
)
from pipeline.warehouse import Warehouse, WarehouseError
from probes.simulator import Scenario, ScenarioError, bundled_scenario, configure
from probes.simulator.history import window
from probes.simulator.running import HOST, serve
from probes.simulator.store import write_history

__all__ = ["register"]

simulate_app = typer.Typer(
    help="The bundled provider simulator: serve it on loopback, or write synthetic history.",
    no_args_is_help=True,
)

SCENARIO_OPTION = typer.Option(
    None,
    "--scenario",
    "-s",
    help="Scenario TOML file (default: the bundled training_cycle scenario).",
    callback=expand_home_option,
)


def _scenario(
    path: Path | None, time_scale: float | None = None, quiet: bool | None = None
) -> Scenario:
    """Load the scenario or exit 2 naming the file and key."""
    refuse_a_missing_name_with_a_space(path)
    try:
        return configure(path or bundled_scenario(), time_scale=time_scale, quiet=quiet)
    except ScenarioError as exc:
        fail(str(exc), 2)


def _finite(value: float | None, option: str, *, positive: bool = True) -> None:
    """Exit 2 naming ``option`` unless ``value`` (if given) is finite and above zero, or
    at least zero: NaN passes every ``<=`` check and then fails deep in the simulator."""
    if value is None:
        return
    if not (math.isfinite(value) and (value > 0 if positive else value >= 0)):
        bound = "above zero" if positive else ">= 0"
        fail(f"{option}: expected a finite number {bound}, got {value}", 2)


@simulate_app.command("serve")
def serve_command(
    scenario: Path | None = SCENARIO_OPTION,
    port: int = typer.Option(8765, "--port", "-p", help="TCP port on 127.0.0.1 (0 = any free)."),
    time_scale: float | None = typer.Option(
        None, "--time-scale", help="Multiply every simulated delay (0.01 = 100x faster)."
    ),
    quiet: bool = typer.Option(
        False, "--quiet", help="No random errors, faults or wrong answers (only on request)."
    ),
) -> None:
    """Serve the scenario's providers on 127.0.0.1 until interrupted (Ctrl-C)."""
    if not 0 <= port <= 65535:
        fail(f"--port: expected 0..65535, got {port}", 2)
    _finite(time_scale, "--time-scale", positive=False)  # 0 = no sleeps (tests)
    sim = _scenario(scenario, time_scale=time_scale, quiet=quiet or None)

    def ready(bound: int) -> None:
        urls = ", ".join(f"http://{HOST}:{bound}/{p.name}/v1" for p in sim.providers)
        typer.echo(f"simulating {sim.name} (Ctrl-C to stop): {urls}", err=True)

    try:
        serve(sim, port, on_ready=ready)
    except OSError as exc:
        fail(f"cannot listen on {HOST}:{port}: {exc.strerror}")


@simulate_app.command("history")
def history_command(
    scenario: Path | None = SCENARIO_OPTION,
    days: float = typer.Option(180.0, "--days", help="Length of the history, ending now."),
    db: Path = typer.Option(
        ...,
        "--db",
        help="Warehouse file to write (created if missing).",
        callback=expand_home_option,
    ),
    seed: int | None = typer.Option(None, "--seed", help="Random seed (default: the scenario's)."),
    cadence: float | None = typer.Option(
        None, "--cadence-minutes", help="Minutes between runs of each probe (default: scenario)."
    ),
    step_scale: float | None = typer.Option(
        None, "--step-scale", help="Scale every phase's change (0 = no degradation)."
    ),
    noise: float | None = typer.Option(None, "--noise", help="Scale every noise sigma."),
    end: datetime | None = typer.Option(
        None, "--end", help="End of the history (UTC; default now)."
    ),
    append: bool = typer.Option(
        False, "--append", help="Keep earlier synthetic rows instead of replacing them."
    ),
) -> None:
    """Write synthetic probe rows (source='synthetic') plus the planted phases and releases."""
    _finite(cadence, "--cadence-minutes")
    _finite(step_scale, "--step-scale", positive=False)
    _finite(noise, "--noise", positive=False)
    if seed is not None and seed < 0:
        fail(f"--seed: expected an integer >= 0, got {seed}", 2)
    location = warehouse_location(None, db)[0]  # a folder, an empty or foreign file: refused
    sim = _scenario(scenario)
    changes = {"cadence_minutes": cadence, "step_scale": step_scale, "noise": noise}
    options = dataclasses.replace(
        sim.history, **{k: v for k, v in changes.items() if v is not None}
    )
    when = end.replace(tzinfo=UTC) if end and end.tzinfo is None else end
    if when is not None and when.year == datetime.max.year:
        fail(f"--end: expected a time before the year {when.year}, got {end}", 2)
    now = datetime.now(UTC)
    if when is not None and when > now:  # rows from the future would pass for the latest data
        fail(f"--end: {when:%Y-%m-%d %H:%M} UTC is in the future (now {now:%Y-%m-%d %H:%M})", 2)
    try:
        window(sim, days, when)  # bad days (NaN, <= 0, before year 1) refused before any write
    except ValueError as exc:
        fail(f"--days: {exc}", 2)
    try:
        summary = write_history(
            Warehouse(location),
            sim,
            days=days,
            end=when,
            seed=seed,
            options=options,
            replace=not append,
        )
    except WarehouseError as exc:
        fail(str(exc))
    typer.echo(
        f"wrote {summary.inserted:,} synthetic rows ({summary.rows_per_s:,.0f} rows/s generated, "
        f"{summary.write_s:.1f}s to store), {summary.phases} planted phases and "
        f"{summary.releases} releases to {db}"
    )


def register(app: typer.Typer) -> None:
    """Add ``nerfwatch simulate serve|history``."""
    app.add_typer(simulate_app, name="simulate")
