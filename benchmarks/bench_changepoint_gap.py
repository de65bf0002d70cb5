"""Where detect() loses on the series annotated by eye, and how far better windows could go.

On the 500 series looked at while developing (``bench_changepoints.py --by-length``'s), by
length band, it prints:

* the consensus marks (a mark that two or more of the three annotators share within the
  scoring's +-5-point margin) and how many of them detect() misses;
* detect()'s reports that no annotator marked within the margin;
* F1 / cover today, then two ceilings:
  - **the test's**: every missed consensus mark that the confirmation test
    (``confirm.step_pvalue``, a series read once, at ``1/n``) passes in the window the
    neighbouring consensus marks bound, added. That is the most any confirmation with the
    same test and better-chosen windows could gain, before any false change of its own
    (series with missing values get no additions; they are counted);
  - **the annotators'**: every missed consensus mark added;
  - **no unmarked reports**: today's reports less those no annotator marked within the
    margin (what perfect precision would win, beside the recall the others measure).

The gap between today and the test's ceiling is what window choice can win; the gap
between the first two ceilings is what the test itself refuses (bends that a smooth curve
explains, turns in a wandering series), which no choice of windows wins.

Run: .venv/bin/python benchmarks/bench_changepoint_gap.py [--detect-from FILE]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_changepoints import (
    LENGTH_BANDS,
    Detector,
    load_detect,
    the_500,
)
from benchmarks.changepoint_devset import Series
from benchmarks.changepoint_scores import MARGIN, covering, f_measure
from pipeline.analysis.changepoints import robust_scale
from pipeline.analysis.changepoints.confirm import step_pvalue
from pipeline.analysis.changepoints.noise import winsorize
from pipeline.analysis.periodicity import remove_cycle


def consensus_marks(annotators: list[list[int]], margin: int = MARGIN) -> list[int]:
    """Marks that two or more annotators share within ``margin``, one per cluster (the first
    such mark from the left)."""
    shared: list[int] = []
    for mark in sorted(m for marks in annotators for m in marks):
        if any(abs(mark - s) <= margin for s in shared):
            continue
        if sum(any(abs(mark - m) <= margin for m in marks) for marks in annotators) >= 2:
            shared.append(mark)
    return shared


def passing_in_ideal_windows(values: np.ndarray, marks: list[int], found: list[int]) -> list[int]:
    """The ``marks`` that ``found`` misses and that the confirmation test passes at ``1/n``
    in the window between their neighbouring marks (none for a series with missing
    values, whose positions the test would see shifted)."""
    x, _ = remove_cycle(np.asarray(values, dtype=np.float64))
    sigma = robust_scale(x) if np.all(np.isfinite(x)) else 0.0
    if not sigma > 0:
        return []
    z = winsorize((x - np.median(x)) / sigma, 1.0)
    edges = [0, *marks, x.size]
    passing = []
    for i, mark in enumerate(marks, start=1):
        if any(abs(mark - f) <= MARGIN for f in found):
            continue
        if step_pvalue(z, edges[i - 1], mark, edges[i + 1]) <= 1.0 / x.size:  # NaN: no
            passing.append(mark)
    return passing


@dataclass(frozen=True)
class SeriesGap:
    """One series' counts and its F1 / cover today, at the test's ceiling and the annotators'."""

    consensus: int
    missed: int
    reports: int
    unmarked: int
    with_gaps: bool
    # rows: today, the test's ceiling, the annotators', no unmarked reports; columns: F1, cover
    scores: np.ndarray


def series_gap(s: Series, found: list[int]) -> SeriesGap:
    """What detect()'s ``found`` misses and adds on ``s``, and the two ceilings' scores."""
    ann = s.annotators()
    shared = consensus_marks(ann)
    missed = [c for c in shared if all(abs(c - f) > MARGIN for f in found)]
    passing = passing_in_ideal_windows(s.values, shared, found)
    marks = [m for a in ann for m in a]
    n = s.values.size
    marked = [f for f in found if any(abs(f - m) <= MARGIN for m in marks)]
    outputs = (found, sorted({*found, *passing}), sorted({*found, *missed}), marked)
    return SeriesGap(
        consensus=len(shared),
        missed=len(missed),
        reports=len(found),
        unmarked=len(found) - len(marked),
        with_gaps=not np.all(np.isfinite(s.values)),
        scores=np.array([[f_measure(ann, o), covering(ann, o, n)] for o in outputs]),
    )


def band_line(title: str, gaps: list[SeriesGap]) -> str:
    """One printed row: totals and mean scores over a length band's series."""
    consensus, missed, reports, unmarked, with_gaps = (
        sum(getattr(g, k) for g in gaps)
        for k in ("consensus", "missed", "reports", "unmarked", "with_gaps")
    )
    cells = " | ".join(f"{f:.3f} / {c:.3f}" for f, c in np.mean([g.scores for g in gaps], axis=0))
    return (
        f"{title:<14} {len(gaps):4d} | {consensus:5d} {missed:6d} | "
        f"{reports:5d} {unmarked:8d} | {cells} | {with_gaps:4d}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detect-from", help="score the detect() defined in this file")
    args = parser.parse_args()
    detector: Detector = load_detect(args.detect_from)
    gaps = [(s.values.size, series_gap(s, detector(s.values))) for s in the_500()]
    print("500 looked-at series annotated by eye: consensus marks missed, reports nobody")
    print("marked, and F1 / cover today, at the test's ceiling, at the annotators' and")
    print("with no unmarked report")
    print(f"{'length':<14} {'n':>4} | {'marks':>5} {'missed':>6} | {'found':>5} "
          f"{'unmarked':>8} | {'today':^15} | {'test ceiling':^15} | "
          f"{'annotators':^15} | {'no unmarked':^15} | gaps")  # fmt: skip
    for title, low, high in LENGTH_BANDS:
        print(band_line(title, [g for n, g in gaps if low <= n < high]))


if __name__ == "__main__":
    main()
