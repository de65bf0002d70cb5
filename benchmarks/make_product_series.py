"""Write one product series for the change-point tests (run once; output committed).

History 9 of ``bench_analysis_accuracy.py`` (the bundled training_cycle scenario, 180 days
at a 10-minute cadence, seed 109, that history's noise options): provider kestrel's
hourly short-context TTFT exactly as the phase finder hands it to ``detect()``
(deseasonalized log p50, NaN where an hour has no probe), and the hours of its planted
onsets (start of a non-stable stage after a stable one), counted from the series' first
hour. A long multi-stage series of the kind the product analyses, so a change-point test
can check in milliseconds what the benchmark checks in minutes: that the onsets are not
explained away.

Run: .venv/bin/python benchmarks/make_product_series.py
"""

from __future__ import annotations

import dataclasses
import json
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pipeline.analysis.phase_rows as phase_rows
from benchmarks.bench_analysis_accuracy import CLOCK_START, DAYS, truth, variants
from pipeline.analysis.orchestrate import run_analysis
from pipeline.warehouse import Warehouse
from probes.simulator import bundled_scenario, configure
from probes.simulator.store import write_history

OUT = Path(__file__).resolve().parent.parent / "tests/data/changepoints/product_kestrel.json"
HISTORY = 9
PROVIDER = "kestrel"


def main() -> None:
    seen: dict[str, np.ndarray] = {}
    original = phase_rows._provider_series

    def recording(grid, adjusted, provider, model):  # type: ignore[no-untyped-def]
        s = original(grid, adjusted, provider, model)
        seen[provider] = np.asarray(s.short, dtype=np.float64).copy()
        return s

    phase_rows._provider_series = recording
    sim = configure(bundled_scenario(), start=CLOCK_START)
    end = datetime(CLOCK_START.year, CLOCK_START.month, CLOCK_START.day, tzinfo=UTC)
    end += timedelta(days=DAYS)
    opts = dataclasses.replace(sim.history, cadence_minutes=10.0, **variants(20)[HISTORY])
    with tempfile.TemporaryDirectory() as d:
        wh = Warehouse(Path(d) / "bench.duckdb")
        wh.migrate()
        write_history(wh, sim, days=DAYS, end=end, seed=100 + HISTORY, options=opts)
        run_analysis(wh, source="synthetic")
        onsets, _, start = truth(wh)
    values = seen[PROVIDER]
    hours = [round((t - start) / timedelta(hours=1)) for t in onsets[PROVIDER]]
    out = {
        "history": HISTORY,
        "provider": PROVIDER,
        "onset_hours": hours,
        "values": [None if not np.isfinite(v) else round(float(v), 5) for v in values],
    }
    OUT.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({values.size} hours, onsets at {hours})")


if __name__ == "__main__":
    main()
