"""How often the cycle search finds a cycle in noise that has none.

``periodicity.find_cycle`` screens for a spectral line, then confirms a period by a
Kruskal-Wallis test across phases. That test assumes independent values. This prints, on
changeless series (white noise, AR(1) noise, random walks; fixed seeds):

1. the share of series in which the phase test alone rejects at ``1e-3`` for a given period
   (a test at its level would show about 0.001), on the values as they are (the test as
   first written) and prewhitened by AR(1) (the test ``find_cycle`` runs);
2. the share in which the spectral screen alone passes (its nominal level is ``1e-3``);
3. the share in which ``find_cycle`` reports any cycle (what ``detect()`` would remove),
   with the upper end of its 95 % interval (Clopper-Pearson) and the periods it reported.

Run: .venv/bin/python benchmarks/bench_cycle_null.py [--series N]   (about a minute at 2000)
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from scipy import stats
from scipy.signal import lfilter

from pipeline.analysis import periodicity

Noise = Callable[[np.random.Generator, int], np.ndarray]

NOISES: dict[str, Noise] = {
    "white": lambda rng, n: rng.normal(size=n),
    "AR(1) 0.5": lambda rng, n: lfilter([1.0], [1.0, -0.5], rng.normal(size=n)),
    "AR(1) 0.9": lambda rng, n: lfilter([1.0], [1.0, -0.9], rng.normal(size=n)),
    "random walk": lambda rng, n: np.cumsum(rng.normal(size=n)),
}
PHASE_TESTS = [(1000, 7), (1000, 48), (1000, 168), (574, 109), (700, 168)]
LENGTHS = [100, 300, 1000]
LEVEL = 1e-3


def phase_test_share(
    noise: Noise, n: int, period: int, series: int, seed: int, prewhiten: bool = True
) -> float:
    """Share of ``series`` changeless series whose phase test rejects at ``LEVEL``; with
    ``prewhiten=False``, the Kruskal-Wallis test on the values as they are."""
    rng = np.random.default_rng(seed)
    pvalues = [_phase_pvalue(noise(rng, n), period, prewhiten) for _ in range(series)]
    return float(np.mean(np.array(pvalues) < LEVEL))


def _phase_pvalue(x: np.ndarray, period: int, prewhiten: bool) -> float:
    if prewhiten:
        return periodicity._phase_profile(x, period).pvalue
    detrended = x - periodicity._moving_average(x, period)
    phase = np.arange(x.size) % period
    counts = np.bincount(phase, minlength=period)
    return periodicity._kruskal_pvalue(detrended, phase, counts)


def screen_share(noise: Noise, n: int, series: int, seed: int) -> float:
    """Share of ``series`` changeless series in which the spectral screen finds a line."""
    rng = np.random.default_rng(seed)
    return float(np.mean([periodicity._line_periods(noise(rng, n)) is not None
                          for _ in range(series)]))  # fmt: skip


def false_cycles(noise: Noise, n: int, series: int, seed: int) -> list[int]:
    """Periods ``find_cycle`` reports over ``series`` changeless series (one per false find)."""
    rng = np.random.default_rng(seed)
    found = (periodicity.find_cycle(noise(rng, n)) for _ in range(series))
    return sorted(cycle.period for cycle in found if cycle is not None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=2000, help="series per row (2000)")
    args = parser.parse_args()
    print(f"Phase test alone, share rejecting at {LEVEL:g} ({args.series} series per row),")
    print("as first written (raw) / as find_cycle runs it (prewhitened by AR(1))")
    print(f"{'noise':<12}" + "".join(f"{f'n={n} P={p}':>15}" for n, p in PHASE_TESTS))
    for k, (label, noise) in enumerate(NOISES.items()):
        cells = [
            f"{phase_test_share(noise, n, p, args.series, 100 * k + j, prewhiten=False):.3f}"
            f" / {phase_test_share(noise, n, p, args.series, 100 * k + j):.3f}"
            for j, (n, p) in enumerate(PHASE_TESTS)
        ]
        print(f"{label:<12}" + "".join(f"{c:>15}" for c in cells))
    print(f"\nSpectral screen alone, share passing ({args.series} series per row)")
    for k, (label, noise) in enumerate(NOISES.items()):
        shares = [screen_share(noise, n, args.series, 500 + 100 * k + n) for n in LENGTHS]
        print(
            f"{label:<12}"
            + "".join(f"  n={n:<5} {s:.3f}" for n, s in zip(LENGTHS, shares, strict=True))
        )
    print(f"\nfind_cycle, share reporting a cycle ({args.series} series per row)")
    for k, (label, noise) in enumerate(NOISES.items()):
        for n in LENGTHS:
            periods = false_cycles(noise, n, args.series, 1000 + 100 * k + n)
            upper = stats.binomtest(len(periods), args.series).proportion_ci(method="exact").high
            share = len(periods) / args.series
            print(
                f"{label:<12} n={n:<5} {share:.4f} (95 % interval to {upper:.4f})"
                f"  periods {periods[:12]}"
            )


if __name__ == "__main__":
    main()
