"""Synthetic history: the warehouse accepts it, and it carries the scenario's planted truth."""

from __future__ import annotations

import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from pipeline.warehouse import Warehouse
from probes.simulator import bundled_scenario, load_scenario
from probes.simulator.history import generate, window
from probes.simulator.scenario import HistoryOptions
from probes.simulator.store import write_history
from probes.simulator.uuid7 import uuid7_batch
from probes.tasks import FAMILIES

SCENARIO = load_scenario(bundled_scenario())
END = datetime(2026, 11, 20, 12, tzinfo=UTC)


def test_uuid7_batch_matches_the_rfc_layout() -> None:
    ms = np.array([1_795_212_861_000, 1_795_212_861_001, 0], dtype=np.int64)
    ids = uuid7_batch(ms, np.random.default_rng(0)).to_pylist()
    for text, stamp in zip(ids, ms, strict=True):
        value = uuid.UUID(text)
        assert value.version == 7 and value.variant == uuid.RFC_4122
        assert value.int >> 80 == stamp
    assert ids[0] < ids[1]


def test_short_history_passes_the_schema_and_records_truth(warehouse: Warehouse) -> None:
    summary = write_history(warehouse, SCENARIO, days=2, end=END, seed=1)
    expected = 2 * 288 * len(SCENARIO.providers) * len(SCENARIO.probes)
    assert summary.inserted == summary.rows
    assert expected * 0.9 <= summary.rows <= expected + 12  # downtime gaps may drop rows
    rows = warehouse.query(
        "SELECT source, count(*) AS n, count(DISTINCT provider) AS providers, "
        "count(DISTINCT probe) AS probes FROM probe_results GROUP BY source"
    ).row(0, named=True)
    assert rows == {"source": "synthetic", "n": summary.rows, "providers": 3, "probes": 4}
    families = warehouse.query("SELECT DISTINCT task_family FROM probe_results")["task_family"]
    assert set(families) <= set(FAMILIES)
    phases = warehouse.query("SELECT * FROM synthetic_phases ORDER BY provider, phase_index")
    assert phases.height == sum(len(p.phases) for p in SCENARIO.providers)
    assert set(phases["stage"]) == {
        "stable",
        "subtle",
        "long_context",
        "major",
        "release",
        "recovery",
    }
    releases = warehouse.query("SELECT * FROM releases WHERE origin = 'synthetic'")
    assert releases.height == sum(len(p.releases) for p in SCENARIO.providers)
    # the views built on probe_results work on synthetic rows
    assert warehouse.query("SELECT count(*) AS n FROM daily")["n"][0] > 0
    runs = warehouse.query("SELECT row_count FROM synthetic_runs")
    assert runs["row_count"].to_list() == [summary.rows]


def test_rerun_replaces_and_append_is_idempotent(warehouse: Warehouse) -> None:
    first = write_history(warehouse, SCENARIO, days=1, end=END, seed=3)
    again = write_history(warehouse, SCENARIO, days=1, end=END, seed=3)
    assert again.rows == first.rows
    appended = write_history(warehouse, SCENARIO, days=1, end=END, seed=3, replace=False)
    assert appended.inserted == 0
    count = warehouse.query("SELECT count(*) AS n FROM probe_results")["n"][0]
    assert count == first.rows


def _frame(options: HistoryOptions | None = None, days: float = 180) -> pl.DataFrame:
    return generate(SCENARIO, window(SCENARIO, days, END), seed=7, options=options)


def _phase_of(frame: pl.DataFrame, provider: str) -> pl.DataFrame:
    win = window(SCENARIO, 180, END)
    days = (frame["started_at"].dt.epoch("s").to_numpy() - win.scenario_start.timestamp()) / 86400
    p = SCENARIO.provider(provider)
    starts = np.array([ph.start_day for ph in p.phases])
    idx = np.clip(np.searchsorted(starts, days, side="right") - 1, 0, None)
    return frame.with_columns(pl.Series("stage", [p.phases[i].stage for i in idx]))


def test_history_follows_the_planted_phases() -> None:
    frame = _frame().filter(pl.col("provider") == "nova")
    staged = _phase_of(frame, "nova")
    ok = staged.filter(pl.col("error_class") == "ok")
    ttft = ok.group_by("stage", "context_class").agg(pl.col("ttft_ms").median())

    def median(stage: str, ctx: str) -> float:
        row = ttft.filter((pl.col("stage") == stage) & (pl.col("context_class") == ctx))
        return float(row["ttft_ms"][0])

    assert median("long_context", "long") > 1.5 * median("stable", "long")
    assert median("major", "short") > 1.3 * median("stable", "short")
    assert median("long_context", "long") / median("stable", "long") > median(
        "long_context", "short"
    ) / median("stable", "short")
    errors = staged.group_by("stage").agg((pl.col("error_class") != "ok").mean().alias("rate"))
    rate = dict(zip(errors["stage"], errors["rate"], strict=True))
    assert rate["major"] > 3 * rate["stable"]
    scored = staged.filter(pl.col("score_strict").is_not_null())
    wrong = scored.group_by("stage").agg((pl.col("score_strict") != "correct").mean().alias("w"))
    w = dict(zip(wrong["stage"], wrong["w"], strict=True))
    assert w["major"] > 2 * w["stable"]
    limits = staged.group_by("stage").agg(pl.col("rl_requests_limit").median())
    lim = dict(zip(limits["stage"], limits["rl_requests_limit"], strict=True))
    assert lim["major"] < lim["stable"]
    assert set(staged["reported_model"].drop_nulls()) == {"nova-chat", "nova-chat-2"}


def test_history_has_the_daily_rhythm_and_the_knobs_work() -> None:
    frame = _frame(days=28).filter(
        (pl.col("provider") == "nova") & (pl.col("context_class") == "short")
    )
    by_hour = frame.group_by(pl.col("started_at").dt.hour().alias("h")).agg(
        pl.col("ttft_ms").median()
    )
    peak = by_hour.filter(pl.col("h") == 15)["ttft_ms"][0]
    trough = by_hour.filter(pl.col("h") == 3)["ttft_ms"][0]
    assert peak > 1.05 * trough
    flat = _frame(HistoryOptions(seasonality=0.0, outliers=0, heavy_tail=0), days=28).filter(
        (pl.col("provider") == "nova") & (pl.col("context_class") == "short")
    )
    hours = flat.group_by(pl.col("started_at").dt.hour().alias("h")).agg(pl.col("ttft_ms").median())
    spread = hours["ttft_ms"].max() / hours["ttft_ms"].min()
    assert spread < peak / trough
    none = _frame(HistoryOptions(step_scale=0.0, gaps_per_month=0), days=180).filter(
        pl.col("provider") == "nova"
    )
    staged = _phase_of(none, "nova").filter(pl.col("error_class") == "ok")
    med = staged.group_by("stage").agg(pl.col("ttft_ms").median())
    values = med["ttft_ms"].to_numpy()
    assert values.max() / values.min() < 1.15  # no planted change left


def test_gaps_remove_rows() -> None:
    dense = _frame(HistoryOptions(gaps_per_month=0), days=30).height
    gappy = _frame(HistoryOptions(gaps_per_month=20, gap_hours=12), days=30).height
    assert gappy < 0.9 * dense


@pytest.mark.slow
def test_cli_writes_180_days(tmp_path: Path) -> None:
    db = tmp_path / "history.duckdb"
    cmd = [str(Path(sys.executable).parent / "nerfwatch"), "simulate", "history", "--days", "180"]
    done = subprocess.run(
        [*cmd, "--db", str(db)], capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "synthetic rows" in done.stdout
    count = Warehouse(db).query("SELECT count(*) AS n FROM probe_results")["n"][0]
    assert count > 0.9 * 180 * 288 * 12
    end = Warehouse(db).query("SELECT max(started_at) AS t FROM probe_results")["t"][0]
    assert datetime.now(UTC) - end < timedelta(minutes=10)


def test_providers_of_one_vendor_share_its_releases(warehouse: Warehouse) -> None:
    """Two endpoints of one vendor (e.g. a general and a coding plan) carry the same release
    calendar; the warehouse gets each release once."""
    from dataclasses import replace

    nova = SCENARIO.provider("nova")
    twin = replace(nova, name="nova-coding")
    scenario = replace(SCENARIO, providers=(*SCENARIO.providers, twin))
    summary = write_history(warehouse, scenario, days=1, end=END, seed=4)
    releases = warehouse.query(
        "SELECT count(*) AS n FROM releases WHERE origin = 'synthetic' AND vendor = ?",
        [nova.vendor],
    )
    assert summary.rows > 0 and releases["n"][0] == len(nova.releases)


def test_histories_drawn_the_same_day_share_every_row_they_both_cover() -> None:
    """The demo's history depends on the day, not the minute it was started.

    Two demo runs 40 minutes apart once dated kestrel's onset 18 days apart because
    every random draw moved with the window's start.
    """
    later = END + timedelta(minutes=40)
    first = generate(SCENARIO, window(SCENARIO, 20, END), seed=3)
    second = generate(SCENARIO, window(SCENARIO, 20, later), seed=3)
    overlap = (later - timedelta(days=20), END)

    def cut(frame: pl.DataFrame) -> pl.DataFrame:
        inside = pl.col("started_at").is_between(*overlap, closed="left")
        return frame.filter(inside).sort("run_id")

    shared = cut(first)
    assert shared.height > 0.99 * first.height
    assert shared.equals(cut(second))
