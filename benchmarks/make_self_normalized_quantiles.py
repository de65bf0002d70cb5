"""Upper quantiles of the self-normalized change-point statistic under no change, the
table ``break_tests.level_change_pvalue`` reads its p-values from.

Shao and Zhang (2010, JASA 105: 1228-1240) give 29.6, 40.1 and 68.6 as its 90, 95 and
99 % points; this script simulates the statistic (``break_tests.self_normalized``) on
Gaussian white noise of ``N`` points and prints the quantiles at ``TAIL`` (the upper-tail
probabilities), to paste into ``break_tests._TAIL`` / ``_QUANTILE``. Seeded: two runs print
the same table.

Run: .venv/bin/python benchmarks/make_self_normalized_quantiles.py [REPLICATIONS]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.analysis.break_tests import self_normalized

N = 2000
TAIL = (0.5, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0005, 0.0002)


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rng = np.random.default_rng(20100901)
    stats = np.array([self_normalized(rng.normal(size=N)) for _ in range(reps)])
    quantiles = np.quantile(stats, [1.0 - t for t in TAIL])
    print(f"{reps} replications of {N} points")
    print("_TAIL =", TAIL)
    print("_QUANTILE =", tuple(round(float(q), 2) for q in quantiles))


if __name__ == "__main__":
    main()
