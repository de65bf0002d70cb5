"""detect() on a long multi-stage series of the kind the product analyses: 180 days of
hourly TTFT with gradual onsets (from bench_analysis_accuracy's history 9; see
tests/data/changepoints/README.md). A method that explains curvature away as smooth
(e.g. a polynomial rival to each change) must not explain these onsets away too: this
checks in a second what the accuracy benchmark checks in minutes, read as the product reads
it (``monitor=True``: ``reading.monitored``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from pipeline.analysis.changepoints import detect

DATA = Path(__file__).resolve().parent / "data" / "changepoints" / "product_kestrel.json"
# A gradual onset's raw break lags the planted hour (the phase finder dates it later).
MAX_LAG_HOURS = 96


def test_each_planted_onset_keeps_a_break_within_four_days() -> None:
    data = json.loads(DATA.read_text())
    values = np.array([np.nan if v is None else v for v in data["values"]], dtype=float)
    found = detect(values, monitor=True)  # as the product calls it
    for onset in data["onset_hours"]:
        assert any(abs(b - onset) <= MAX_LAG_HOURS for b in found), (onset, found)
