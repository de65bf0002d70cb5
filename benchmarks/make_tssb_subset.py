"""Write the TSSB part of the change-point development set (run once; output committed).

Source: the Time Series Segmentation Benchmark (Ermshaus, Schaefer & Leser, 2023),
github.com/ermshaua/time-series-segmentation-benchmark, BSD 3-Clause. Each TSSB series
concatenates UCR classification samples grouped by class; the change points are the
concatenation offsets (labelled by construction). Every one of its 75 series is kept and
shortened to at most 500 points by averaging blocks of ``ceil(n / 500)`` points (TSSB itself
resamples by block means); change points are divided by the block size and rounded.

Run: .venv/bin/python benchmarks/make_tssb_subset.py GIT_DIR
(``GIT_DIR`` a clone of the repository; the files are read from its HEAD.)
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests/data/changepoints/tssb_shortened.json"
MAX_POINTS = 500


def _show(git_dir: str, path: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"HEAD:{path}"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


def main(git_dir: str) -> None:
    series = {}
    for line in _show(git_dir, "tssb/datasets/desc.txt").splitlines():
        name, _window, *cps = line.strip().split(",")
        values = np.array(_show(git_dir, f"tssb/datasets/{name}.txt").split(), dtype=float)
        block = math.ceil(values.size / MAX_POINTS)
        usable = values.size - values.size % block
        short = values[:usable].reshape(-1, block).mean(axis=1)
        breaks = sorted({round(int(c) / block) for c in cps} - {0, short.size})
        series[name] = {"block": block, "cps": breaks, "values": np.round(short, 4).tolist()}
    OUT.write_text(json.dumps(series, separators=(",", ":")) + "\n")
    print(f"wrote {len(series)} series to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
