"""How conservative the confirmation test's search correction is: the effective number of
positions in a window, against the Bonferroni count the test uses (a measurement; nothing
here is read by the pipeline).

A candidate is the best of its window's positions, so its p-value must be corrected for
the search. Bonferroni (times the ``m`` positions of a window of ``m`` points) holds for
any dependence, but the F statistics of a jump and a slope change at neighbouring
positions are nearly the same statistic, so the smallest of their p-values is far larger
than ``m`` independent tests would give: Bonferroni is conservative, the more so the
longer the window. This script measures by how much. For windows of ``m`` Gaussian white
noise points it repeats the levels' test (``confirm.changes_pvalue`` with ``rho`` 0: the
curve of degree 1 or 2 that ``confirm.smooth_degree`` picks, a jump and a slope change,
the F test on 2 and ``m - terms - 1`` degrees of freedom) at every position at least
``POINT_WIDTH`` from either end, keeps the smallest p-value, and reports its 1 % quantile
``q``. Then ``0.01 / q`` is the number of positions a Bonferroni correction would need to
hold the window's false alarms at exactly 1 %, the confirmation's level: the effective
number of positions.

Theory (the supremum of F statistics over candidate break dates: Davies 1977; Andrews
1993) says the count grows with the log of the window for a trimming that is a fixed
fraction of it; here the trimming is a fixed ``POINT_WIDTH`` points and the count grows
faster, close to a power of ``m``. The script fits ``A * m ** B`` by least squares on the
logs over the lengths from ``FITTED_FROM`` points and prints each length's false-alarm
rate at that count as a check.

Measured in the twentieth session (6,000 windows per length, 19 min on two cores): ``A``
0.920, ``B`` 0.653; the count is 13 at 60 points, 33 at 240, 84 at 1,000, against
Bonferroni's 60, 240 and 1,000, and each length's rate at the fitted count lies between
0.7 % and 1.4 % from 30 to 2,000 points. So Bonferroni holds the confirmation test at
about 0.1 % to 0.2 % rather than 1 % in windows of 120 points and more. Using the fitted
count in the confirmation (the random-walk route kept Bonferroni, its bursts being local)
was tried then and not kept: logistic and exponential curves of 300 points were cut (two
of the three seeds of ``test_smooth_curves_have_no_change_points``), a kink was reported
10 points off, and the series annotated by eye fell (F1 / cover 0.727 / 0.728 -> 0.719 /
0.718 on 196), with the development set level (0.704 / 0.665 -> 0.707 / 0.666). The
quadratic null misfits a long smooth curve, and a test at its true level finds that
misfit; Bonferroni's margin is what keeps such curves whole. A sounder count needs a
sounder null first.

Run: .venv/bin/python benchmarks/make_position_counts.py [REPLICATIONS]
"""

from __future__ import annotations

import sys
from multiprocessing import Pool

import numpy as np

from benchmarks.make_unit_root_critical_values import best_break_designs
from pipeline.analysis.changepoints.confirm import ALPHA, POINT_WIDTH
from pipeline.analysis.changepoints.fit import prewhitened_pvalue

LENGTHS = (15, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 1000, 1500, 2000)
FITTED_FROM = 30
DEFAULT_REPLICATIONS = 6000


def smallest_pvalue(y: np.ndarray) -> float:
    """Smallest p-value of the levels' test over the positions of a window ``y``."""
    # The degrees of freedom do not depend on the position: the best fit has the smallest p.
    null, alt = best_break_designs(y)
    return prewhitened_pvalue(y, null, alt, 0.0)


def _one(task: tuple[int, int]) -> float:
    m, seed = task
    return smallest_pvalue(np.random.default_rng(seed).normal(size=m))


def main() -> None:
    replications = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_REPLICATIONS
    print(f"{replications} windows of white noise per length; level {ALPHA}")
    smallest: dict[int, np.ndarray] = {}
    with Pool() as pool:
        for m in LENGTHS:
            tasks = [(m, 1_000_003 * m + seed) for seed in range(replications)]
            smallest[m] = np.array(pool.map(_one, tasks, chunksize=64))
    own = {m: ALPHA / float(np.quantile(smallest[m], ALPHA)) for m in LENGTHS}
    fitted = [m for m in LENGTHS if m >= FITTED_FROM]
    slope, intercept = np.polyfit(np.log(fitted), np.log([own[m] for m in fitted]), 1)
    scale = float(np.exp(intercept))
    print(f"fitted: {scale:.3f} * m ** {slope:.3f}")
    header = ("points", "positions", "own 1% count", "fitted", "rate at fitted")
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, (7, 9, 12, 7, 14), strict=True)))
    for m in LENGTHS:
        count = max(1.0, min(float(m), scale * m ** float(slope)))
        at = float(np.mean(smallest[m] <= ALPHA / count))
        print(f"{m:7d} {m - 2 * POINT_WIDTH + 1:9d} {own[m]:12.1f} {count:7.1f} {at:14.4f}")


if __name__ == "__main__":
    main()
