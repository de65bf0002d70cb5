"""Write synthetic history and its planted ground truth into the warehouse.

``probes`` knows nothing of DuckDB; this module only hands polars frames to the
``Warehouse`` object the caller passes in (``pipeline.warehouse.Warehouse``).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import polars as pl

from probes.simulator.history import Window, generate, window
from probes.simulator.scenario import HistoryOptions, Scenario
from probes.simulator.truth import options_json, planted_phases, planted_releases

__all__ = ["HistorySummary", "write_history"]


class WarehouseLike(Protocol):
    def insert_frame(self, table: str, frame: pl.DataFrame, *, key: str | None = None) -> int: ...

    def execute(self, sql: str, params: Any = None) -> None: ...


@dataclass(frozen=True, slots=True)
class HistorySummary:
    rows: int  # rows generated
    inserted: int  # rows new to the warehouse
    phases: int
    releases: int
    window: Window
    generate_s: float
    write_s: float

    @property
    def rows_per_s(self) -> float:
        return self.rows / max(self.generate_s, 1e-9)


def write_history(
    warehouse: WarehouseLike,
    scenario: Scenario,
    *,
    days: float,
    end: datetime | None = None,
    seed: int | None = None,
    options: HistoryOptions | None = None,
    replace: bool = True,
) -> HistorySummary:
    """Generate ``days`` of history ending at ``end`` (default now) and store it.

    With ``replace`` (the default) earlier synthetic rows of the scenario's providers and
    its planted phases are deleted first, so a rerun does not stack two histories.
    """
    opts = options or scenario.history
    win = window(scenario, days, end)
    started = time.perf_counter()
    frame = generate(scenario, win, seed=seed, options=opts)
    generated = time.perf_counter()
    names = [p.name for p in scenario.providers]
    marks = ", ".join("?" for _ in names)
    if replace:
        warehouse.execute(
            f"DELETE FROM probe_results WHERE source = 'synthetic' AND provider IN ({marks})",
            names,
        )
    # After the delete nothing can clash, so the run_id check is skipped; appending
    # (replace=False) keeps it, so a rerun stays idempotent on run_id.
    inserted = warehouse.insert_frame("probe_results", frame, key=None if replace else "run_id")
    phases = planted_phases(scenario, win, opts.step_scale)
    warehouse.execute("DELETE FROM synthetic_phases WHERE scenario = ?", [scenario.name])
    warehouse.insert_frame("synthetic_phases", phases)
    # providers of one vendor share its releases: one calendar row per release
    releases = planted_releases(scenario, win).unique(
        ["vendor", "model", "release_date"], keep="first", maintain_order=True
    )
    vendors = sorted({p.vendor for p in scenario.providers})
    warehouse.execute(
        "DELETE FROM releases WHERE origin = 'synthetic' AND vendor IN "
        f"({', '.join('?' for _ in vendors)})",
        vendors,
    )
    warehouse.insert_frame("releases", releases)
    warehouse.insert_frame("synthetic_runs", _run_row(scenario, win, seed, opts, frame.height))
    return HistorySummary(
        rows=frame.height,
        inserted=inserted,
        phases=phases.height,
        releases=releases.height,
        window=win,
        generate_s=generated - started,
        write_s=time.perf_counter() - generated,
    )


def _run_row(
    scenario: Scenario, win: Window, seed: int | None, opts: HistoryOptions, rows: int
) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "scenario": [scenario.name],
            "generated_at": [datetime.now(UTC)],
            "seed": [scenario.seed if seed is None else seed],
            "start_at": [win.start],
            "end_at": [win.end],
            "scenario_start": [win.scenario_start],
            "row_count": [rows],
            "options": [options_json(dataclasses.replace(opts))],
        }
    )
