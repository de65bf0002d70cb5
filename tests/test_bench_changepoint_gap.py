"""The gap benchmark's measurements: which marks the annotators share, which missed ones the
confirmation test would pass in the window their neighbours bound, and one series' counts
and scores (benchmarks/bench_changepoint_gap.py)."""

from __future__ import annotations

import numpy as np

from benchmarks.bench_changepoint_gap import (
    consensus_marks,
    passing_in_ideal_windows,
    series_gap,
)
from benchmarks.changepoint_devset import Series


def test_a_consensus_mark_is_one_two_annotators_share_within_the_margin() -> None:
    annotators = [[10, 50], [12], [49, 80]]
    assert consensus_marks(annotators) == [10, 49]  # 80 is one annotator's; 12 joins 10
    assert consensus_marks([[10], [16], [30]]) == []  # 6 apart: beyond the 5-point margin
    assert consensus_marks([[], [], []]) == []


def test_a_missed_step_passes_in_its_ideal_window_and_noise_does_not() -> None:
    rng = np.random.default_rng(5)
    noise = rng.normal(size=120)
    step = noise + 6.0 * (np.arange(120) >= 60)
    assert passing_in_ideal_windows(step, [60], found=[]) == [60]
    assert passing_in_ideal_windows(step, [60], found=[62]) == []  # found within the margin
    assert passing_in_ideal_windows(noise, [60], found=[]) == []


def test_a_series_with_missing_values_gets_no_additions() -> None:
    step = np.r_[np.zeros(60), np.full(60, 6.0)] + np.random.default_rng(6).normal(size=120)
    step[10] = np.nan
    assert passing_in_ideal_windows(step, [60], found=[]) == []


def test_a_series_gap_counts_what_was_missed_and_added_and_scores_both_ceilings() -> None:
    """A clear step all three mark, found nowhere; one report at a noise point nobody marked,
    one annotator's lone mark: the step is missed and passes its test, so both ceilings
    recover it, the lone report stays unmarked, and dropping it raises F1."""
    values = np.r_[np.zeros(60), np.full(60, 6.0)] + np.random.default_rng(7).normal(size=120)
    s = Series("step", "test", values, [], annotations=([60], [61], [59, 100]))
    gap = series_gap(s, found=[30])
    assert (gap.consensus, gap.missed, gap.reports, gap.unmarked) == (1, 1, 1, 1)
    today, test_ceiling, annotators, no_unmarked = gap.scores
    assert test_ceiling[0] > today[0] and test_ceiling[1] > today[1]
    assert np.array_equal(test_ceiling, annotators)
    assert no_unmarked[0] > today[0]  # the report at 30 gone: precision
