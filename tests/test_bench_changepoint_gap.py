"""The gap benchmark's two measurements: which marks the annotators share, and which missed
ones the confirmation test would pass in the window their neighbours bound
(benchmarks/bench_changepoint_gap.py)."""

from __future__ import annotations

import numpy as np

from benchmarks.bench_changepoint_gap import consensus_marks, passing_in_ideal_windows


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
