"""Where analysis meets the warehouse: read series, run ``compute``, write the tables.

``compute`` (``pipeline.analysis.compute``) is pure, frames in and frames out;
``run_analysis`` wraps it with an ``analysis_runs`` record (running -> done or failed) and
writes every result row with the run's id, so runs never overwrite each other. What the
daemon alerts on after a run is ``pipeline.analysis.phase_changes``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import polars as pl
from threadpoolctl import threadpool_limits

from pipeline.analysis.answer_distribution import fixed_prompt_shifts
from pipeline.analysis.compute import compute
from pipeline.analysis.metadata_sign import metadata_signs
from pipeline.analysis.metric_rows import ONLINE_ARL0_HOURS, ONLINE_K
from pipeline.analysis.paired_items import paired_tests
from pipeline.analysis.schemas import ANALYSIS_RUNS
from pipeline.analysis.series import (
    load_hourly,
    time_span,
)
from pipeline.analysis.warning_signs import BASELINE, RECENT
from pipeline.drift.signs import drift_signs, with_fixed_prompt
from pipeline.warehouse import Warehouse, WarehouseError
from probes.ids import new_run_id

__all__ = ["compute", "run_analysis", "scored_rows"]


def _reference(warehouse: Warehouse, synthetic: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Releases and incidents; synthetic (planted) rows only when analysing synthetic data."""
    origin = "" if synthetic else " WHERE origin <> 'synthetic'"
    releases = warehouse.query(f"SELECT vendor, model, release_date FROM releases{origin}")
    incidents = warehouse.query(f"SELECT vendor, start_date, end_date FROM incidents{origin}")
    return releases, incidents


_METADATA_SQL = """
SELECT provider, model, started_at, reported_model, system_fingerprint, task_family,
       prompt_chars, input_tokens, reasoning_tokens, extracted_answer, upstream_provider
FROM probe_results
WHERE input_tokens IS NOT NULL AND started_at >= ? AND started_at < ?
  AND (CAST(? AS VARCHAR) IS NULL OR source = ?)
"""


def _metadata_rows(warehouse: Warehouse, end: datetime, source: str | None) -> pl.DataFrame:
    """Rows for the metadata sign: its three windows (recent, two earlier) and baseline."""
    start = end - 3 * RECENT - BASELINE
    rows = warehouse.query(_METADATA_SQL, [start, end, source, source])
    return rows.with_columns(pl.col("started_at").dt.convert_time_zone("UTC"))


_SCORED_SQL = """
SELECT provider, model, task_family, seed, score_strict, started_at,
       CASE WHEN started_at >= ? THEN 'recent' ELSE 'baseline' END AS "window"
FROM probe_results
WHERE score_strict IS NOT NULL AND seed IS NOT NULL AND started_at >= ? AND started_at < ?
  AND (CAST(? AS VARCHAR) IS NULL OR source = ?)
"""


def scored_rows(warehouse: Warehouse, end: datetime, source: str | None) -> pl.DataFrame:
    """Scored items of dumber_answers' baseline and recent windows, for McNemar."""
    split = end - RECENT
    return warehouse.query(_SCORED_SQL, [split, split - BASELINE, end, source, source])


def run_analysis(
    warehouse: Warehouse,
    since: datetime | None = None,
    until: datetime | None = None,
    *,
    source: str | None = None,
    seed: int = 0,
    drift_dir: Path | None = None,
) -> str:
    """Analyse the warehouse, write every result table under a new analysis id, return it.

    ``drift_dir``: the folder whose ``drift/`` holds the accepted drift baselines (the
    config's warehouse folder); by default a file warehouse's own folder, and none for a
    lake, which has no folder of its own."""
    # after every stored run, whatever this process's clock says: phase changes are
    # those against the run whose id sorts just before (phase_changes_since)
    latest = warehouse.query("SELECT max(analysis_id) AS id FROM analysis_runs")["id"][0]
    analysis_id = new_run_id(after=latest)
    params = {
        "source": source,
        "seed": seed,
        "online_arl0_hours": ONLINE_ARL0_HOURS,
        "online_k": ONLINE_K,
    }
    warehouse.insert_frame(
        "analysis_runs",
        pl.DataFrame(
            [{
                "analysis_id": analysis_id, "started_at": datetime.now(UTC), "status": "running",
                "since": since, "until": until, "params": json.dumps(params),
                "nerfwatch_version": _version(),
            }],
            schema=ANALYSIS_RUNS,
        ),
    )  # fmt: skip
    try:
        hourly = load_hourly(warehouse, since, until, source)
        synthetic = bool(hourly.height) and source != "live" and _has_synthetic(warehouse)
        releases, incidents = _reference(warehouse, synthetic)
        folder = drift_dir if drift_dir is not None else _file_folder(warehouse)
        extra = drift_signs(folder, seed=seed) if folder is not None else []
        if hourly.height:
            end = time_span(hourly["hour"])[1] + timedelta(hours=1)
            # a baseline nobody sampled lately says nothing about this window
            extra = [s for s in extra if s.window_end >= end - RECENT]
            rows = _metadata_rows(warehouse, end, source)
            extra = with_fixed_prompt(extra, fixed_prompt_shifts(rows, end - RECENT), end)
            extra += metadata_signs(rows, end)
            paired = paired_tests(scored_rows(warehouse, end, source))
            site_hourly = (
                load_hourly(warehouse, since, until, source, by_site=True)
                if _several_sites(warehouse, since, until, source)
                else None
            )
        else:
            paired, site_hourly = {}, None
        # The fits are small (thousands of rows by a dozen columns): OpenBLAS's threads
        # cost more to wake than they save, 12x on a 2-core machine for a 2160 x 13
        # least-squares fit, and the results do not change (test_scale_year_bench).
        with threadpool_limits(limits=1, user_api="blas"):
            frames = compute(
                hourly, releases, incidents, seed=seed, extra_signs=extra, paired=paired,
                site_hourly=site_hourly,
            )  # fmt: skip
        for table, frame in frames.items():
            if frame.height:
                warehouse.insert_frame(
                    table, frame.with_columns(pl.lit(analysis_id).alias("analysis_id"))
                )
        data_until = time_span(hourly["hour"])[1] + timedelta(hours=1) if hourly.height else until
        warehouse.execute(
            "UPDATE analysis_runs SET status = 'done', finished_at = now(), until = ?, detail = ? "
            "WHERE analysis_id = ?",
            [data_until, f"{hourly.height} hourly buckets analysed", analysis_id],
        )
    except Exception as exc:
        warehouse.execute(
            "UPDATE analysis_runs SET status = 'failed', finished_at = now(), detail = ? "
            "WHERE analysis_id = ?",
            [f"{type(exc).__name__}: {exc}"[:500], analysis_id],
        )
        raise
    return analysis_id


def _file_folder(warehouse: Warehouse) -> Path | None:
    try:
        return warehouse.path.parent
    except WarehouseError:  # a lake
        return None


def _several_sites(
    warehouse: Warehouse, since: datetime | None, until: datetime | None, source: str | None
) -> bool:
    """Whether the analysed rows of one source come from two probe sites or more (a
    cheap scan, so a single site does not pay for a second hourly aggregation).

    Sites are compared within a source: simulated history is labelled with a site of its
    own, and a demo's live probes beside it are not a second place probed from."""
    frame = warehouse.query(
        "SELECT coalesce(max(n), 0) AS n FROM ("
        " SELECT source, count(DISTINCT coalesce(probe_site, '')) AS n FROM probes"
        " WHERE ($1::TIMESTAMPTZ IS NULL OR started_at >= $1::TIMESTAMPTZ)"
        " AND ($2::TIMESTAMPTZ IS NULL OR started_at < $2::TIMESTAMPTZ)"
        " AND ($3::VARCHAR IS NULL OR source = $3::VARCHAR) GROUP BY source)",
        [since, until, source],
    )
    return int(frame["n"][0]) > 1


def _version() -> str | None:
    try:
        return version("nerfwatch")
    except PackageNotFoundError:
        return None


def _has_synthetic(warehouse: Warehouse) -> bool:
    frame = warehouse.query("SELECT count(*) AS n FROM probe_results WHERE source = 'synthetic'")
    return bool(frame["n"][0])
