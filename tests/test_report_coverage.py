"""The data-quality notes count the hours that were due and had no probes, no others.

Real DuckDB files, ``render_report`` with ``now`` pinned at the end of 2026-W47; no
analysis is needed for these notes. Each case is a week the old notes misread: a Monday
without data passed as "no gaps" (gaps were counted from the week's first probe), a
provider added on Thursday was "missing" 72 hours and named as a Python tuple, a
provider probed every 8 hours made the daemon "probably down" for 140 hours, and a
provider that stopped on Wednesday had a 110-hour "gap".
"""

from __future__ import annotations

import html as html_lib
import re
from datetime import timedelta
from pathlib import Path

import polars as pl

from pipeline.report import IsoWeek, render_report
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame

WEEK = IsoWeek(2026, 47)  # Monday 2026-11-16 up to Monday 2026-11-23
END = WEEK.end


def _short(provider: str) -> list[Series]:
    return [Series(provider, f"{provider}-short", "short")]


def _quality(wh: Warehouse, frames: list[pl.DataFrame], tmp_path: Path) -> list[str]:
    frame = pl.concat(frames).with_columns(source=pl.lit("live"))
    wh.insert_frame("probe_results", frame, key="run_id")
    page = render_report(wh, tmp_path, week=WEEK, now=END).read_text(encoding="utf-8")
    block = page.split('id="quality"', 1)[1].split("</ul>", 1)[0]
    items = re.findall(r"<li[^>]*>(.*?)</li>", block, flags=re.S)
    notes = [html_lib.unescape(re.sub(r"\s+", " ", i)).strip() for i in items]
    return [n for n in notes if not n.startswith("No finished analysis run")]


def test_a_monday_without_probes_is_a_gap(warehouse: Warehouse, tmp_path: Path) -> None:
    history = probe_frame(_short("alpha"), end=END, days=20, seed=1)
    monday = (pl.col("started_at") >= WEEK.start) & (
        pl.col("started_at") < WEEK.start + timedelta(days=1)
    )
    notes = _quality(warehouse, [history.filter(~monday)], tmp_path)
    assert notes == [
        "No probes from any provider for 24 hour(s) of this week (longest gap 24 h from "
        "2026-11-16 00:00 UTC): the daemon was probably down."
    ], notes


def test_a_provider_added_on_thursday_is_new_not_missing(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    old = probe_frame(_short("old"), end=END, days=20, seed=1)
    new = probe_frame(_short("newbie"), end=END, days=4, seed=2)  # from Thursday 00:00
    notes = _quality(warehouse, [old, new], tmp_path)
    assert notes == ["newbie: first probed 2026-11-19 00:00 UTC (new this week)."], notes


def test_a_provider_that_stopped_is_said_to_have_stopped(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    """'acme' is probed until Wednesday 10:00 (renamed 'acme-v2' from then on)."""
    split = WEEK.start + timedelta(days=2, hours=10)
    acme = probe_frame(_short("acme"), end=split, days=20, seed=1)
    renamed = probe_frame(_short("acme-v2"), end=END, days=(END - split) / timedelta(days=1))
    notes = _quality(warehouse, [acme, renamed], tmp_path)
    last = acme["started_at"].max()
    assert notes == [
        f"acme: no probes after {last:%Y-%m-%d %H:%M} UTC.",
        "acme-v2: first probed 2026-11-18 10:00 UTC (new this week).",
    ], notes


def test_probes_every_eight_hours_are_no_downtime(warehouse: Warehouse, tmp_path: Path) -> None:
    """20 probes in the week, one every 8.4 hours: the quiet hours between are the
    schedule."""
    solo = probe_frame(_short("solo"), end=END, days=7, every_min=7 * 24 * 60 / 20, seed=1)
    assert solo.height == 20
    assert _quality(warehouse, [solo], tmp_path) == [], "the schedule read as downtime"
