"""McNemar on the same seeded items, and the flip rate."""

from __future__ import annotations

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
    assert recent == {("arithmetic", 1): False, ("arithmetic", 2): False}  # 2: once wrong
