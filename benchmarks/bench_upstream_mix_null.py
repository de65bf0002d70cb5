"""The upstream-mix test's unit: whole days, or finer blocks? A null simulation of sticky
routing, and the power to see a mix that moved on only the last of the three recent days.

Null: 31 days of calls every 30 minutes; the router draws an upstream (DeepInfra 50 %,
Together 30 %, Fireworks 20 %) and sticks to it for a stint of exponential length with mean
``stint`` hours, the same routing throughout. The permutation test runs with blocks of
6, 12 or 24 hours (``upstream_mix._BLOCK``); the share of histories with p <= 0.05 should
be about 5 %. Shift: the same, but from the last recent day on, 90 % Together.

Measured (60 histories per cell; share with p <= 0.05, blocks of 6 / 12 / 24 h):
  mean stint  1 h:  0 %   5 %   2 %
  mean stint  4 h: 28 %   8 %   5 %
  mean stint 12 h: 52 %  33 %   8 %
  mean stint 24 h: 65 %  40 %  17 %
  mean stint 48 h: 77 %  68 %  25 %
  last recent day 90 % Together (4 h stints): 35 %  27 %  17 %
Finer blocks buy power only by losing the level as soon as stints outlast a block, so the
test keeps days. Even days exceed 5 % once stints average a day (they span day borders, so
the three recent days are alike); a unit coarser than a day leaves no test at all with
three recent days (contiguous 3-day windows: p >= 1/29).

Run: uv run python benchmarks/bench_upstream_mix_null.py [--histories N]
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl

from pipeline.analysis import upstream_mix

SPLIT = datetime(2026, 11, 17, tzinfo=UTC)
NAMES = np.array(["DeepInfra", "Together", "Fireworks"])
MIX = [0.5, 0.3, 0.2]


def history(rng: np.random.Generator, stint_h: float, shifted: bool) -> pl.DataFrame:
    """Calls every 30 minutes over 28 baseline and 3 recent days under sticky routing."""
    n = 31 * 48
    names, left, current = [], 0.0, "DeepInfra"
    for _ in range(n):
        if left <= 0:
            current = str(rng.choice(NAMES, p=MIX))
            left = rng.exponential(stint_h)
        names.append(current)
        left -= 0.5
    times = [SPLIT - timedelta(days=28) + timedelta(minutes=30 * i) for i in range(n)]
    if shifted:  # the last recent day: 90 % Together, call by call
        last = SPLIT + timedelta(days=2)
        names = [
            ("Together" if rng.random() < 0.9 else "DeepInfra") if t >= last else x
            for t, x in zip(times, names, strict=True)
        ]
    return pl.DataFrame({"started_at": times, "upstream_provider": names})


def rejection(block_h: int, stint_h: float, shifted: bool, histories: int) -> float:
    upstream_mix._BLOCK = timedelta(hours=block_h)
    rng = np.random.default_rng((block_h, int(stint_h * 10), shifted))
    hits = 0
    for _ in range(histories):
        found = upstream_mix.upstream_shift(history(rng, stint_h, shifted), SPLIT)
        hits += found is not None and found.p_value <= 0.05
    return hits / histories


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=100)
    args = parser.parse_args()
    blocks = (6, 12, 24)
    print("null (mean stint h) | " + " | ".join(f"{b} h blocks" for b in blocks))
    for stint in (1.0, 4.0, 12.0, 24.0, 48.0):
        cells = [rejection(b, stint, False, args.histories) for b in blocks]
        print(f"{stint:>5.0f} | " + " | ".join(f"{c:.0%}" for c in cells))
    print(
        "shift on the last day only, mean stint 4 h | "
        + " | ".join(f"{rejection(b, 4.0, True, args.histories):.0%}" for b in blocks)
    )


if __name__ == "__main__":
    main()
