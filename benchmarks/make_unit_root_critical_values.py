"""The real level of the confirmation test's unit-root switch, and the 5 % critical values
it would need (a measurement; nothing here is read by the pipeline).

The switch (``noise.unit_root_plausible``) runs a Dickey-Fuller test on the residuals of
the confirmation test's alternative fit: a polynomial of degree 1 or 2 (BIC) plus a jump
and a slope change at a candidate that a search placed where the data fit it best. Fitting
that break makes a random walk's residuals look more stationary than MacKinnon's tables
assume (they allow for a trend, not for a break chosen from the data). This script repeats
what the switch sees on Gaussian random walks of ``m`` points: the degree chosen by
``confirm.smooth_degree``, the jump and slope change at the best position at least
``POINT_WIDTH`` from either end (``confirm.change_rss``), and ``noise.dickey_fuller_t`` of
the residuals. It prints how often MacKinnon's "ctt" value, which the switch uses, rejects
the unit root (the switch's real level), the simulated 5 % quantile, and how often that
quantile rejects a unit root for white noise and for AR(1) noise with rho 0.5 (where it
cannot for nearly all white noise, a switch at that value could not be used). The
quantiles are fitted by a response surface ``b0 + b1 / m + b2 / m**2``, the form of
MacKinnon (2010). The break at the best position is the least favourable case (a search
candidate sits at or near it).

The eighteenth session measured a switch at these values (4,000 walks per length: b0
-5.124, b1 -22.8, b2 74; 50 points the shortest window) and did not keep it: see
``noise.unit_root_plausible``.

Run: .venv/bin/python benchmarks/make_unit_root_critical_values.py [REPLICATIONS]
"""

from __future__ import annotations

import sys
from multiprocessing import Pool

import numpy as np

from pipeline.analysis.changepoints.confirm import POINT_WIDTH, change_rss, smooth_degree
from pipeline.analysis.changepoints.fit import least_squares
from pipeline.analysis.changepoints.noise import dickey_fuller_5pct, dickey_fuller_t

LENGTHS = (30, 40, 50, 60, 80, 100, 150, 200, 300, 500, 1000)
FITTED_FROM = 40  # the surface is fitted to these lengths and up
DEFAULT_REPLICATIONS = 4000


def switch_statistic(y: np.ndarray) -> float:
    """The Dickey-Fuller t statistic that the switch computes for a window ``y`` whose
    candidate sits at the best-fitting position."""
    _, alt = best_break_designs(y)
    return dickey_fuller_t(least_squares(alt, y)[1])


def best_break_designs(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The confirmation test's null (the smooth curve ``confirm.smooth_degree`` picks) and
    alternative (plus a jump and a slope change) for a window ``y``, the change at the
    best-fitting position at least ``POINT_WIDTH`` from either end."""
    m = y.size
    t = (np.arange(m, dtype=np.float64) - m / 2) / m
    null = np.vander(t, smooth_degree(t, y) + 1, increasing=True)
    positions = np.arange(POINT_WIDTH, m - POINT_WIDTH + 1)
    tau = int(positions[np.argmin(change_rss(null, y, positions))])
    after = (np.arange(m) >= tau).astype(np.float64)
    return null, np.column_stack([null, after, (t - t[tau]) * after])


def _noise(kind: str, m: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    shocks = rng.normal(size=m)
    if kind == "walk":
        return np.cumsum(shocks)
    rho = 0.0 if kind == "white" else 0.5
    x = np.empty(m)
    x[0] = shocks[0] / np.sqrt(1 - rho * rho)
    for i in range(1, m):
        x[i] = rho * x[i - 1] + shocks[i]
    return x


def _one(args: tuple[str, int, int]) -> float:
    kind, m, seed = args
    return switch_statistic(_noise(kind, m, seed))


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_REPLICATIONS
    quantiles = {}
    with Pool() as pool:
        header = f"{'m':>5} {'at ctt':>7} {'5 % value':>10}"
        print(f"{header} {'white rejected':>15} {'AR(0.5) rejected':>17}")
        for m in LENGTHS:
            draws = {
                kind: np.array(pool.map(_one, [(kind, m, 1_000_000 * i + s) for s in range(reps)]))
                for i, kind in enumerate(("walk", "white", "ar"))
            }
            crit = float(np.quantile(draws["walk"], 0.05))
            quantiles[m] = crit
            at_ctt = float(np.mean(draws["walk"] < dickey_fuller_5pct(m)))
            white, ar = (float(np.mean(draws[k] < crit)) for k in ("white", "ar"))
            print(f"{m:>5} {at_ctt:>7.3f} {crit:>10.3f} {white:>15.3f} {ar:>17.3f}", flush=True)
    lengths = np.array([m for m in LENGTHS if m >= FITTED_FROM], dtype=np.float64)
    design = np.column_stack([np.ones_like(lengths), 1 / lengths, 1 / lengths**2])
    coef = np.linalg.lstsq(design, np.array([quantiles[int(m)] for m in lengths]), rcond=None)[0]
    print(f"response surface (m >= {FITTED_FROM}): b0 {coef[0]:.3f}, b1 {coef[1]:.1f}, "
          f"b2 {coef[2]:.0f}")  # fmt: skip
    for m in lengths:
        fitted = coef[0] + coef[1] / m + coef[2] / m**2
        print(f"  m {int(m):>5}: simulated {quantiles[int(m)]:.3f}, fitted {fitted:.3f}")


if __name__ == "__main__":
    main()
