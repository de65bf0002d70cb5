"""Where the development set's constructed truth and the eye disagree, kind by kind.

The development set labels its constructed series by construction; the goal is scored
against people's marks. ``tests/data/changepoints/constructed_by_eye.json`` holds 66 series
drawn by the development set's own makers from generator seeds it never uses (12 seasonal
series with a step, 6 without, 6 cycle-free steps; then 3 of every kind), each with its
constructed change points and the marks of three annotators who saw only anonymised plots,
as every batch annotated by eye. Per kind this prints the construction scored against the
annotators (1.0 where people mark exactly what was built), and `detect()` and z-scored
binary segmentation scored against the construction and against the annotators.

Run: .venv/bin/python benchmarks/bench_changepoint_eye.py [--detect-from FILE]
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from collections.abc import Callable

import numpy as np
import ruptures as rpt

from benchmarks.bench_changepoints import Detector, load_detect, ruptures_detector, z_scored
from benchmarks.changepoint_devset import Series, constructed_by_eye
from benchmarks.changepoint_scores import MARGIN, covering, f_measure

Pair = tuple[float, float]
Table = dict[str, dict[str, list[Pair]]]


def against(truth: list[list[int]], found: list[int], n: int) -> Pair:
    """F1 and cover of ``found`` scored against ``truth`` (one list per annotator)."""
    return f_measure(truth, found), covering(truth, found, n)


def by_kind(series: list[Series], detectors: dict[str, Detector]) -> Table:
    """Per kind, each column's (F1, cover) per series: the construction against the eye,
    then each detector against the construction and against the eye."""
    table: Table = defaultdict(lambda: defaultdict(list))
    for s in series:
        n, eye, built = s.values.size, s.annotators(), [s.cps]
        row = table[s.kind]
        row["built vs eye"].append(against(eye, s.cps, n))
        for name, detect in detectors.items():
            found = detect(s.values)
            row[f"{name} vs built"].append(against(built, found, n))
            row[f"{name} vs eye"].append(against(eye, found, n))
    return table


def _mean(pairs: list[Pair], pick: Callable[[Pair], float]) -> float:
    return statistics.mean(map(pick, pairs))


def _cell(pairs: list[Pair], digits: int) -> str:
    """Mean F1 / mean cover."""
    return f"{_mean(pairs, lambda p: p[0]):.{digits}f} / {_mean(pairs, lambda p: p[1]):.{digits}f}"


def print_table(table: Table) -> None:
    columns = list(next(iter(table.values())))
    print(f"{'kind':<16}{'series':>7} | " + " | ".join(f"{c:>22}" for c in columns))
    everything: dict[str, list[Pair]] = defaultdict(list)
    for kind, row in sorted(table.items()):
        cells = [_cell(row[c], 2) for c in columns]
        print(f"{kind:<16}{len(row[columns[0]]):>7} | " + " | ".join(f"{c:>22}" for c in cells))
        for c in columns:
            everything[c] += row[c]
    cells = [_cell(everything[c], 3) for c in columns]
    count = len(everything[columns[0]])
    print(f"{'all':<16}{count:>7} | " + " | ".join(f"{c:>22}" for c in cells))


def marked(series: list[Series]) -> None:
    """How many constructed changes two of three annotators mark within ``MARGIN`` points."""
    hits: dict[str, list[bool]] = defaultdict(list)
    for s in series:
        for c in s.cps:
            votes = sum(any(abs(m - c) <= MARGIN for m in marks) for marks in s.annotators())
            hits[s.kind].append(votes >= 2)
    print(f"\nConstructed changes marked by two of three annotators within {MARGIN} points")
    for kind, got in sorted(hits.items()):
        print(f"  {kind:<16} {sum(got):>3} of {len(got):>3}  ({np.mean(got):.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detect-from", help="score the detect() defined in this file")
    args = parser.parse_args()
    series = constructed_by_eye()
    detectors = {
        "detect()": load_detect(args.detect_from),
        "binseg z": ruptures_detector(rpt.Binseg, z_scored),
    }
    print(f"{len(series)} constructed series annotated by eye: F1 / cover (5-point margin)")
    print_table(by_kind(series, detectors))
    marked(series)


if __name__ == "__main__":
    main()
