"""How often the cycle search finds a cycle in noise that has none.

``periodicity.find_cycle`` gates on a spectral line, then confirms a period by a
Kruskal-Wallis test across phases at ``1e-3``. That test assumes independent values. This
prints, on changeless series (white noise, AR(1) noise, random walks; fixed seeds):

1. the share of series in which the phase test alone rejects at ``1e-3`` for a given period
   (a test at its level would show about 0.001);
2. the share in which ``find_cycle`` reports any cycle (the gate and both tests together:
   what ``detect()`` would remove), with the periods it reported.

Run: .venv/bin/python benchmarks/bench_cycle_null.py [--series N]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
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


def phase_test_share(noise: Noise, n: int, period: int, series: int, seed: int) -> float:
    """Share of ``series`` changeless series whose phase test rejects at ``LEVEL``."""
    rng = np.random.default_rng(seed)
    pvalues = [periodicity._phase_profile(noise(rng, n), period).pvalue for _ in range(series)]
    return float(np.mean(np.array(pvalues) < LEVEL))


def false_cycles(noise: Noise, n: int, series: int, seed: int) -> list[int]:
    """Periods ``find_cycle`` reports over ``series`` changeless series (one per false find)."""
    rng = np.random.default_rng(seed)
    found = (periodicity.find_cycle(noise(rng, n)) for _ in range(series))
    return sorted(cycle.period for cycle in found if cycle is not None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=300, help="series per row (300)")
    args = parser.parse_args()
    print(f"Phase test alone, share rejecting at {LEVEL:g} ({args.series} series per row)")
    print(f"{'noise':<12}" + "".join(f"{f'n={n} P={p}':>15}" for n, p in PHASE_TESTS))
    for k, (label, noise) in enumerate(NOISES.items()):
        shares = [phase_test_share(noise, n, p, args.series, 100 * k + j)
                  for j, (n, p) in enumerate(PHASE_TESTS)]  # fmt: skip
        print(f"{label:<12}" + "".join(f"{s:>15.3f}" for s in shares))
    print(f"\nfind_cycle, share reporting a cycle ({args.series} series per row)")
    for k, (label, noise) in enumerate(NOISES.items()):
        for n in LENGTHS:
            periods = false_cycles(noise, n, args.series, 1000 + 100 * k + n)
            share = len(periods) / args.series
            print(f"{label:<12} n={n:<5} {share:.3f}  periods {periods[:12]}")


if __name__ == "__main__":
    main()
