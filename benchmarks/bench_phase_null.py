"""How often phases find a change in latency series that have none: the whole-series
gate's long-run variance from an hourly autoregression (before) against days as the unit
(``break_tests.series_change_pvalue`` now).

The series are tests/test_latency_change_pvalues.py's: 60 days of hourly log TTFT with a
daily cycle, hourly AR(1) noise (rho 0.3-0.85), a day-to-day load wander (AR(1) 0.7), 1 %
heavy-tailed hours and a prober gap, deseasonalized as the analysis does; fixed seeds
10000 on. For each series the search and the segment tests run once (``find_phases``'s
steps, no gate), then each gate is applied as ``phases._compare`` applies it: a segment's
p-value is max(its Mann-Whitney p, the gate). Printed per method, with Clopper-Pearson
95 % intervals: the share of series with some phase p < 0.05 and < 0.01 (nominal 5 % and
1 %: a changeless series has no phase to find) and the share with a degraded phase (a
segment at p < 0.01 and at least +5 %). With ``--step``, the same on a +30 % step from
day 30 (seeds 5000 on): the share with a degraded segment (power).

Run: .venv/bin/python benchmarks/bench_phase_null.py [--series 400] [--step 40]
(about 1-2 s of CPU per series; mostly the search).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.analysis import phases
from pipeline.analysis.break_tests import (
    _autoregression_with_variance,
    _kuiper_sf,
    series_change_pvalue,
)
from pipeline.analysis.phases import ProviderSeries
from pipeline.analysis.seasonality import decompose
from tests.test_latency_change_pvalues import HOURS, STEP_HOUR, _latency

Gate = Callable[[np.ndarray, Sequence[int]], float]


def hourly_ar_gate(x: np.ndarray, edges: Sequence[int]) -> float:
    """The gate before: the same Kuiper statistic, its long-run variance from the AR(p)
    (AIC, p <= 48 hours) fitted to the ranks around the search's segments."""
    finite = np.isfinite(x)
    v = x[finite]
    if v.size < 12:
        return float("nan")
    u = stats.rankdata(v) / (v.size + 1) - 0.5
    cuts = np.cumsum(np.concatenate([[0], finite]))[list(edges)]
    pieces = [u[lo:hi] - u[lo:hi].mean() for lo, hi in itertools.pairwise(cuts) if hi > lo]
    phi, innovation = _autoregression_with_variance(np.concatenate(pieces), 48)
    lrv = innovation / max(1.0 - float(phi.sum()), 1e-3) ** 2
    s = np.cumsum(u)
    bridge = s - np.arange(1, v.size + 1) / v.size * s[-1]
    spread = float(bridge.max() - bridge.min())
    return _kuiper_sf(spread / math.sqrt(v.size * lrv)) if lrv > 0 else 1.0


GATES: dict[str, Gate] = {"hourly AR (before)": hourly_ar_gate, "days (now)": series_change_pvalue}


def searched(x: np.ndarray) -> tuple[np.ndarray, list[int], list[tuple[float, float]]]:
    """Deseasonalized series, the search's edges, and (effect, ungated p) per segment."""
    s = ProviderSeries(hours=HOURS, short=decompose(HOURS, x).adjusted)
    edges = [0, *phases.candidate_breaks(s), s.short.size]
    base = phases._baseline(s, edges)
    tested = []
    for lo, hi in itertools.pairwise(edges):
        shift = (
            None if (lo, hi) == base else phases._level_shift(s.short[slice(*base)], s.short[lo:hi])
        )
        if shift is not None:
            tested.append((math.expm1(shift[0]), shift[1]))
    return s.short, edges, tested


def interval(k: int, n: int) -> str:
    lo = stats.beta.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = stats.beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return f"{k:4d}/{n} = {k / n:6.1%} (95 % CI {lo:5.1%}-{hi:5.1%})"


def tally(
    cases: list[tuple[np.ndarray, list[int], list[tuple[float, float]]]], gate: Gate
) -> tuple[int, int, int]:
    """Series with some phase p < 0.05, < 0.01, and with a degraded segment."""
    at_5 = at_1 = degraded = 0
    for x, edges, tested in cases:
        g = gate(x, edges) if len(edges) > 2 else 0.0
        ps = [(effect, max(p, g)) for effect, p in tested]
        smallest = min((p for _, p in ps), default=1.0)
        at_5 += smallest < 0.05
        at_1 += smallest < 0.01
        degraded += any(p < 0.01 and effect >= phases.MIN_LATENCY_EFFECT for effect, p in ps)
    return at_5, at_1, degraded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=400, help="changeless series")
    parser.add_argument("--step", type=int, default=0, help="+30 %% step series (power)")
    args = parser.parse_args()
    null = [searched(_latency(np.random.default_rng(10000 + i))) for i in range(args.series)]
    print(f"{args.series} changeless 60-day hourly series (seeds 10000-{10000 + args.series - 1})")
    for name, gate in GATES.items():
        at_5, at_1, degraded = tally(null, gate)
        n = args.series
        print(f"  {name}")
        print(f"    some phase p < 0.05: {interval(at_5, n)}   nominal 5 %")
        print(f"    some phase p < 0.01: {interval(at_1, n)}   nominal 1 %")
        print(f"    a degraded phase:    {interval(degraded, n)}")
    if args.step:
        step = []
        for i in range(args.step):
            x = _latency(np.random.default_rng(5000 + i))
            step.append(searched(x + math.log(1.3) * (np.arange(x.size) >= STEP_HOUR)))
        print(
            f"\n{args.step} series with a +30 % step at day 30 (seeds 5000-{5000 + args.step - 1})"
        )
        for name, gate in GATES.items():
            print(f"  {name}: a degraded segment in {interval(tally(step, gate)[2], args.step)}")


if __name__ == "__main__":
    main()
