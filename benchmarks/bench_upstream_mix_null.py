"""The upstream-mix test under sticky routing: its false alarms with nothing changed, and
its power on a real mix shift.

Null: 31 days of calls every 30 minutes; the router draws an upstream (DeepInfra 50 %,
Together 30 %, Fireworks 20 %) and sticks to it for a stint of exponential length with mean
``stint`` hours (0: every call drawn anew), the same routing throughout. The share of
histories with p <= 0.05 (and <= 0.01: the metadata sign multiplies the mix's p by its
number of tests, about 5) should be at most 5 % (1 %). A history whose mix moved less than
``MIN_MIX_SHIFT`` is not reported and counts as no rejection (so 0 % with no stickiness).
Shift: in the 3 recent days each call goes to a new upstream (Novita) with chance 50 %.

Measured, 400 histories per cell (binomial 95 % margin about +-2 points at 5 %, +-1 at 1 %);
p <= 0.05 / p <= 0.01:
                                  old: days exchangeable    new: AR(1) across days
  null, no stickiness:                0.0 %   0.0 %             0.0 %   0.0 %
  null, mean stint  6 h:              6.8 %   1.5 %             3.0 %   1.0 %
  null, mean stint 24 h:             22.5 %  10.8 %             3.2 %   1.0 %
  null, mean stint 48 h:             25.8 %  11.0 %             2.0 %   0.8 %
  Novita 50 %, no stickiness:       100 %   100 %             100 %   100 %
  Novita 50 %, mean stint  6 h:      96.2 %  50.0 %            99.2 %  98.5 %
  Novita 50 %, mean stint 24 h:      48.0 %  13.8 %            36.8 %  16.0 %
The p-values alone, without the MIN_MIX_SHIFT gate (old / new, at 0.05 and 0.01): no
stickiness 5.0 / 0.5 against 2.0 / 0.0 %; 6 h 6.8 / 1.5 against 3.0 / 1.0 %; 24 h
22.5 / 10.7 against 3.3 / 1.0 %; 48 h (new) 2.0 / 0.7 %.
The old permutation over days took days as exchangeable: stints of a day or more span day
borders, so the three recent days are alike and looked like a shift four times as often as
the test allowed. The new test (``upstream_mix``) allows the day-to-day autocorrelation and
the stickiness the 28-day baseline shows. Its price is power under day-long stints: a new
upstream at 50 % for 3 days is then what a rare upstream's stint looks like (28 baseline
days hold about 9 independent ones), found in 37 % of histories at 5 %. Earlier figures for
the unit (blocks of 6, 12 and 24 h, 60 histories): finer blocks rejected 28-77 % with stints
of 4-48 h, so days stay the unit.

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
CALLS = 31 * 48


def history(rng: np.random.Generator, stint_h: float, shifted: bool) -> pl.DataFrame:
    """Calls every 30 minutes over 28 baseline and 3 recent days under sticky routing;
    ``shifted``: in the recent days each call goes to Novita with chance 50 %."""
    names, left, current = [], 0.0, "DeepInfra"
    for _ in range(CALLS):
        if left <= 0:
            current = str(rng.choice(NAMES, p=MIX))
            left = rng.exponential(stint_h) if stint_h > 0 else 0.5
        names.append(current)
        left -= 0.5
    times = [SPLIT - timedelta(days=28) + timedelta(minutes=30 * i) for i in range(CALLS)]
    if shifted:
        names = [
            "Novita" if t >= SPLIT and rng.random() < 0.5 else x
            for t, x in zip(times, names, strict=True)
        ]
    return pl.DataFrame({"started_at": times, "upstream_provider": names})


def rejections(stint_h: float, shifted: bool, histories: int) -> tuple[float, float]:
    """Shares of histories with p <= 0.05 and p <= 0.01 (a shift under MIN_MIX_SHIFT
    is not reported, so it counts as no rejection)."""
    rng = np.random.default_rng((int(stint_h * 10), shifted))
    at5 = at1 = 0
    for _ in range(histories):
        found = upstream_mix.upstream_shift(history(rng, stint_h, shifted), SPLIT)
        p = found.p_value if found is not None else 1.0
        at5, at1 = at5 + (p <= 0.05), at1 + (p <= 0.01)
    return at5 / histories, at1 / histories


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=400)
    args = parser.parse_args()
    print("case | p <= 0.05 | p <= 0.01")
    for stint in (0.0, 6.0, 24.0, 48.0):
        at5, at1 = rejections(stint, False, args.histories)
        print(f"null, mean stint {stint:.0f} h | {at5:.1%} | {at1:.1%}")
    for stint in (0.0, 6.0, 24.0):
        at5, at1 = rejections(stint, True, args.histories)
        print(f"Novita at 50 % for 3 days, mean stint {stint:.0f} h | {at5:.1%} | {at1:.1%}")


if __name__ == "__main__":
    main()
