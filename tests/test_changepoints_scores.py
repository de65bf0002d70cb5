"""The change-point scores of the benchmark, on examples worked by hand."""

from __future__ import annotations

import math

import pytest

from benchmarks.changepoint_scores import covering, f_measure, paired_interval, true_positives


def test_true_positives_match_each_prediction_once() -> None:
    # 10 and 12 both lie within 5 of 11, which can serve only one of them.
    assert true_positives([10, 12], [11]) == 1
    assert true_positives([10, 12], [11, 13]) == 2
    assert true_positives([10], [16]) == 0
    assert true_positives([10], [15]) == 1


def test_f1_counts_the_start_as_a_change_point() -> None:
    # No change in truth, none predicted: {0} vs {0}, a perfect score.
    assert f_measure([[]], []) == 1.0
    # Truth {0, 50}, prediction {0}: precision 1, recall 1/2, F1 2/3.
    assert f_measure([[50]], []) == pytest.approx(2 / 3)
    # Truth {0}, prediction {0, 30}: precision 1/2, recall 1, F1 2/3.
    assert f_measure([[]], [30]) == pytest.approx(2 / 3)


def test_f1_with_a_near_miss_and_a_false_alarm() -> None:
    # Truth {0, 100, 200}; prediction {0, 104, 150, 260}: hits 0 and 104, so precision 2/4,
    # recall 2/3, F1 = 2 * (1/2) * (2/3) / (1/2 + 2/3) = 4/7.
    assert f_measure([[100, 200]], [104, 150, 260]) == pytest.approx(4 / 7)


def test_f1_averages_recall_over_annotators() -> None:
    # Annotators {0, 10} and {0, 40}; prediction {0, 10}. Precision against the union
    # {0, 10, 40}: 2 of 2 predictions hit, 1. Recall (2/2 + 1/2) / 2 = 3/4. F1 = 6/7.
    assert f_measure([[10], [40]], [10]) == pytest.approx(6 / 7)


def test_cover_of_hand_worked_partitions() -> None:
    n = 100
    assert covering([[]], [], n) == 1.0
    # Truth [0,50) [50,100), nothing predicted: each half overlaps [0,100) with J = 1/2.
    assert covering([[50]], [], n) == pytest.approx(0.5)
    # Prediction at 60: [0,50) best J with [0,60) = 50/60; [50,100) with [60,100) = 40/50.
    expected = (50 * 50 / 60 + 50 * 40 / 50) / n
    assert covering([[50]], [60], n) == pytest.approx(expected)
    # Over-segmenting a series without changes: [0,100) vs [0,20) [20,100) gives J = 0.8.
    assert covering([[]], [20], n) == pytest.approx(0.8)


def test_cover_averages_over_annotators() -> None:
    assert covering([[50], []], [50], 100) == pytest.approx((1.0 + 0.5) / 2)


def test_paired_interval_is_the_t_interval_of_the_differences() -> None:
    # Differences 1, 2, 3: mean 2, sd 1, half-width t(0.975, 2) / sqrt(3) = 4.303 / 1.732.
    mean, half = paired_interval([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])
    assert mean == pytest.approx(2.0)
    assert half == pytest.approx(4.302653 / 3**0.5, rel=1e-5)
    # The same lead on every series is certain; one series gives no interval.
    assert paired_interval([0.9, 0.8], [0.7, 0.6]) == pytest.approx((0.2, 0.0))
    assert math.isnan(paired_interval([1.0], [0.5])[1])
