"""The historical series with documented breaks: well formed, and each one documented."""

from __future__ import annotations

import json
import math
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "changepoints"


def test_each_historical_series_is_well_formed_and_documented() -> None:
    series = json.loads((DATA / "historical.json").read_text())
    readme = (DATA / "README.md").read_text()
    assert series
    for name, item in series.items():
        values, cps = item["values"], item["cps"]
        assert all(math.isfinite(v) for v in values)
        assert cps == sorted(set(cps))
        assert all(0 < c < len(values) for c in cps)
        assert f"`{name}`" in readme
