"""McNemar on the same seeded items, and the flip rate."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.stats import binomtest

from pipeline.analysis.paired_items import paired_items, pairs_from_rows


def test_flips_that_cancel_leave_accuracy_but_not_the_flip_rate() -> None:
    """20 right->wrong and 20 wrong->right of 100: accuracy unchanged, 40 % flipped."""
    baseline = {i: i < 60 for i in range(100)}
    recent = {i: (i < 40) or (60 <= i < 80) for i in range(100)}
    test = paired_items(baseline, recent)
    assert (test.pairs, test.became_wrong, test.became_right) == (100, 20, 20)
    assert test.accuracy_change == 0.0 and test.p_changed == 1.0
    assert test.flip_rate == 0.4 and test.flip_low < 0.4 < test.flip_high
    assert test.flip_low > 0.30 and test.flip_high < 0.50


def test_more_right_to_wrong_is_worse_by_the_exact_binomial() -> None:
    baseline = {i: True for i in range(50)}
    recent = {i: i >= 9 for i in range(50)} | {"extra": False}  # unpaired: ignored
    baseline |= {f"w{i}": False for i in range(5)}
    recent |= {f"w{i}": i == 0 for i in range(5)}
    test = paired_items(baseline, recent)
    assert (test.pairs, test.became_wrong, test.became_right) == (55, 9, 1)
    assert test.p_worse == pytest.approx(binomtest(9, 10, 0.5, alternative="greater").pvalue)
    assert test.p_worse == pytest.approx(11 / 1024)
    assert test.accuracy_change == pytest.approx(-8 / 55)


def test_no_flips_no_evidence() -> None:
    test = paired_items({1: True, 2: False}, {1: True, 2: False})
    assert test.p_worse == 1.0 and test.flip_rate == 0.0


def test_items_come_from_probe_rows_by_family_and_seed() -> None:
    rows = pl.DataFrame(
        {
            "window": ["baseline", "baseline", "recent", "recent", "recent", "other"],
            "task_family": ["arithmetic"] * 6,
            "seed": [1, 2, 1, 2, 2, 1],
            "score_strict": ["correct", "correct", "unparseable", "correct", "wrong", None],
        }
    )
    baseline, recent = pairs_from_rows(rows)
    assert baseline == {("arithmetic", 1): True, ("arithmetic", 2): True}
    assert recent == {("arithmetic", 1): False, ("arithmetic", 2): False}  # 2: wrong last


def test_an_unchanged_model_asked_more_often_in_the_baseline_flips_both_ways_equally() -> None:
    """200 anchor items, 2016 answers in the 28-day baseline and 216 in the 3-day window,
    each item right with its own fixed probability: nothing changed. 'Right only if right
    every time' made an item asked ten times in the baseline look wrong there, so unchanged
    answers read as about 50 wrong->right and 10 right->wrong flips per window (accuracy
    +30 points, and a real drop hidden). One (the latest) answer per item and window flips
    as often each way."""
    rng = np.random.default_rng(5)
    items, n_base, n_recent = 200, 2016, 216
    p_right = rng.beta(6, 1.2, items)
    became_wrong = became_right = 0
    changes = []
    for _ in range(40):
        seeds = rng.integers(0, items, n_base + n_recent)
        right = rng.random(seeds.size) < p_right[seeds]
        rows = pl.DataFrame({
            "window": ["baseline"] * n_base + ["recent"] * n_recent,
            "task_family": "arithmetic", "seed": seeds,
            "score_strict": np.where(right, "correct", "wrong"),
        })  # fmt: skip
        test = paired_items(*pairs_from_rows(rows))
        became_wrong += test.became_wrong
        became_right += test.became_right
        changes.append(test.accuracy_change)
    assert abs(float(np.mean(changes))) < 0.02, np.mean(changes)
    both_ways = binomtest(became_wrong, became_wrong + became_right, 0.5).pvalue
    assert both_ways > 0.001, (became_wrong, became_right)


def test_the_latest_answer_of_a_window_counts_when_rows_come_unordered() -> None:
    rows = pl.DataFrame(
        {
            "window": ["baseline", "baseline", "recent", "recent"],
            "task_family": ["arithmetic"] * 4,
            "seed": [1, 1, 1, 1],
            "score_strict": ["correct", "wrong", "wrong", "correct"],
            "started_at": [3, 1, 9, 7],
        }
    )
    assert pairs_from_rows(rows) == ({("arithmetic", 1): True}, {("arithmetic", 1): False})
