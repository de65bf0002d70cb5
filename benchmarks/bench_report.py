"""Weekly report over one year of 20 series: rendering time and file size.

Setup (not timed): the simulator's history generator writes 365 days for 5 providers x
4 probes (the bundled scenario's 3 providers plus 2 renamed copies) at the scenario's
5-minute cadence into a fresh warehouse, plus a finished analysis run with phases and
daily probabilities so every chart is drawn. Timed: ``render_report`` in-process
(queries, charts, template, write), best of ``--repeat`` runs; the heatmap's query
alone, with the rows it hands to Python (they grew with the cadence when it returned
every answer; ``--cadence-min 1`` is five times the default); and the one grouped pass
the four daily series are summed from (``pipeline/report/daily_series.py``).

Targets: <= 10 s and <= 3 MB.

    uv run python benchmarks/bench_report.py [--days 365] [--cadence-min 5] [--repeat 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from pipeline.report import data as report_data
from pipeline.report import render_report
from pipeline.report.daily_series import read_daily_series
from pipeline.report.timeline import CHART_DAYS
from pipeline.warehouse import Warehouse
from probes.simulator import configure
from probes.simulator.scenario import Scenario
from probes.simulator.store import write_history

TARGET_S = 10.0
TARGET_BYTES = 3 * 1024 * 1024


def twenty_series(cadence_min: float) -> Scenario:
    """Bundled scenario widened to 5 providers x 4 probes."""
    base = configure(None)
    extra = tuple(
        dataclasses.replace(p, name=f"{p.name}-{suffix}", vendor=f"{p.vendor} {suffix}")
        for suffix, p in (("eu", base.providers[0]), ("b", base.providers[1]))
    )
    history = dataclasses.replace(base.history, cadence_minutes=cadence_min)
    return dataclasses.replace(base, providers=base.providers + extra, history=history)


def add_analysis(wh: Warehouse, providers: list[str], end: datetime, days: int) -> None:
    """A finished analysis run: every provider stable, then degraded for 40 days."""
    aid = str(uuid.uuid4())
    run = {
        "analysis_id": aid,
        "started_at": end,
        "finished_at": end,
        "status": "done",
        "since": end - timedelta(days=days),
        "until": end,
    }
    wh.insert_rows("analysis_runs", [run], key="analysis_id")
    onset = end - timedelta(days=40)
    phases = [
        {
            "analysis_id": aid,
            "provider": p,
            "phase_no": i,
            "label": label,
            "stage": stage,
            "start_at": start,
            "end_at": stop,
            "severity": sev,
            "confidence": 0.9,
        }
        for p in providers
        for i, (label, stage, start, stop, sev) in enumerate(
            [
                ("stable", "stable", end - timedelta(days=days), onset, 0.0),
                ("degraded", "long_context_issues", onset, None, 0.35),
            ]
        )
    ]
    wh.insert_frame("phases", pl.DataFrame(phases))
    probability = pl.DataFrame(
        [
            {
                "analysis_id": aid,
                "provider": p,
                "day": (end - timedelta(days=d)).date(),
                "p_degraded": 0.9 if d < 40 else 0.1,
            }
            for p in providers
            for d in range(days)
        ]
    )
    wh.insert_frame("degraded_probability", probability)


def heatmap_query(wh: Warehouse, end: datetime) -> None:
    """The heatmap's query alone: its time and how many rows reach Python."""
    window = [end - timedelta(days=report_data.HEATMAP_DAYS), end]
    sql = "SET TimeZone = 'UTC';\n" + report_data._HOUR_OF_WEEK
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        rows = wh.query(sql, window).height
        times.append(time.perf_counter() - t0)
    print(f"heatmap query: {min(times):.3f} s (best of 3), {rows:,} rows to Python")


def daily_series_query(wh: Warehouse, end: datetime) -> None:
    """The four daily series' one grouped pass alone (they were four scans of the raw
    probes, most of the report's query time)."""
    charted = [end - timedelta(days=CHART_DAYS), end]
    times = []
    for _ in range(3):
        with wh.connect(read_only=True) as con:
            read = report_data._Reader(wh, con)
            t0 = time.perf_counter()
            read_daily_series(read.run, read, *charted)
            times.append(time.perf_counter() - t0)
    print(f"daily series (one pass): {min(times):.3f} s (best of 3)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--cadence-min", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        wh = Warehouse(Path(tmp) / "nerfwatch.duckdb")
        wh.migrate()
        scenario = twenty_series(args.cadence_min)
        end = datetime.now(UTC)
        started = time.perf_counter()
        summary = write_history(wh, scenario, days=args.days, end=end)
        add_analysis(wh, [p.name for p in scenario.providers], end, args.days)
        series = len(scenario.providers) * len(scenario.probes)
        print(
            f"setup: {summary.rows:,} rows, {series} series, {args.days} days, "
            f"{time.perf_counter() - started:.1f} s"
        )
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            path = render_report(wh, Path(tmp) / "reports")
            times.append(time.perf_counter() - t0)
        size = path.stat().st_size
        best = min(times)
        print(
            f"report: {best:.2f} s (runs: {', '.join(f'{t:.2f}' for t in times)}), "
            f"{size / 1024 / 1024:.2f} MB"
        )
        heatmap_query(wh, end)
        daily_series_query(wh, end)
        verdict = "OK" if best <= TARGET_S and size <= TARGET_BYTES else "OVER TARGET"
        print(f"targets <= {TARGET_S:.0f} s and <= {TARGET_BYTES // 1024 // 1024} MB: {verdict}")


if __name__ == "__main__":
    main()
