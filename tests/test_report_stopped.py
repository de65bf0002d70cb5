"""A provider whose probes stopped during the week gets no verdict of "now" and no pick.

'acme' was probed for 20 days up to Wednesday 10:00 of 2026-W47, then renamed 'acme-v2'
in the config (its data stop, the new name's start). The old report called acme "Stable
since 2026-10-09, high confidence" and sent both context classes to it: the fastest
provider of the week, not probed for the last four and a half days. Real path: a DuckDB
file, ``run_analysis``, ``render_report``, ``now`` pinned at the week's end.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import polars as pl

from pipeline.report import IsoWeek
from pipeline.warehouse import Warehouse
from tests.support.report import Series, probe_frame
from tests.test_report_odd_weeks import _both, _recommendations, _render, _verdict

WEEK = IsoWeek(2026, 47)
END = WEEK.end


def test_a_provider_renamed_on_wednesday_is_not_judged_or_picked_now(
    warehouse: Warehouse, tmp_path: Path
) -> None:
    split = WEEK.start + timedelta(days=2, hours=10)
    acme = probe_frame(_both("acme"), end=split, days=20, seed=1)
    renamed = probe_frame(_both("acme-v2"), end=END, days=(END - split) / timedelta(days=1))
    steady = probe_frame([Series("steady", "steady-short", "short")], end=END, days=20, seed=3)
    # acme is the fastest: the old pick went to it
    acme = acme.with_columns(pl.col("ttft_ms") * 0.5)
    warehouse.insert_frame("probe_results", pl.concat([acme, renamed, steady]), key="run_id")
    page = _render(warehouse, tmp_path, WEEK, END)
    verdict = _verdict(page, "acme")
    assert "No probes since 2026-11-18" in verdict, verdict
    assert "so there is no verdict for now" in verdict, verdict
    assert "Stable since" not in verdict and "confidence" not in verdict, verdict
    picks = _recommendations(page)
    short = picks.split("long context", 1)[0]
    # acme-v2 and steady have one TTFT distribution: a tie within their intervals
    assert re.search(r"short context (acme-v2|steady|No clear pick acme-v2, steady) ", short)
    assert "Left out: acme, not probed for a day or more (last probed 2026-11-18 09:" in short
    assert "long context acme-v2" in picks, picks  # acme was the only other long one
