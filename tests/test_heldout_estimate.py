"""The held-out estimate (benchmarks/heldout_estimate.py): the ratio of means, the
bootstrap over batches, and that every recorded first look is the one the data README
records."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.heldout_estimate import FIRST_LOOKS, GOAL, FirstLook, estimate

README = Path(__file__).parent / "data" / "changepoints" / "README.md"


def _look(name: str, detect: tuple[float, float], binseg: tuple[float, float]) -> FirstLook:
    return FirstLook(name, detect, detect, binseg)


def test_the_estimate_is_the_ratio_of_means_times_binsegs_held_out_figures() -> None:
    looks = (_look("a", (0.6, 0.5), (0.5, 0.5)), _look("b", (0.9, 0.7), (0.7, 0.5)))
    result = estimate(looks, issue_binseg=(0.6, 0.6), resamples=2_000)
    assert result.point == pytest.approx((0.75 / 0.6 * 0.6, 0.6 / 0.5 * 0.6))
    assert result.low[0] <= result.point[0] <= result.high[0]
    assert result.low[1] <= result.point[1] <= result.high[1]


def test_batches_that_agree_leave_no_uncertainty_and_spread_ones_do() -> None:
    same = tuple(_look(str(i), (0.8, 0.7), (0.7, 0.7)) for i in range(5))
    tight = estimate(same, resamples=2_000)
    assert tight.low == pytest.approx(tight.high)
    spread = tuple(_look(str(i), (0.5 + 0.1 * i, 0.7), (0.7, 0.7)) for i in range(5))
    wide = estimate(spread, resamples=2_000)
    assert wide.high[0] - wide.low[0] > 0.05
    assert wide.high[1] == pytest.approx(wide.low[1])  # cover agrees in every batch


def test_the_share_at_the_goal_counts_resamples_on_each_measure() -> None:
    far_above = tuple(_look(str(i), (2.0, 2.0), (1.0, 1.0)) for i in range(3))
    far_below = tuple(_look(str(i), (0.5, 0.5), (1.0, 1.0)) for i in range(3))
    assert estimate(far_above, resamples=500).reaching_goal == (1.0, 1.0)
    assert estimate(far_below, resamples=500).reaching_goal == (0.0, 0.0)
    assert GOAL == (0.75, 0.72)  # the issue's


def test_adopted_figures_are_used_only_when_asked() -> None:
    looks = (FirstLook("a", (0.5, 0.5), (0.7, 0.7), (0.5, 0.5)),)
    assert estimate(looks, issue_binseg=(1.0, 1.0), resamples=10).point == (1.0, 1.0)
    adopted = estimate(looks, adopted=True, issue_binseg=(1.0, 1.0), resamples=10)
    assert adopted.point == pytest.approx((1.4, 1.4))


@pytest.mark.parametrize("look", FIRST_LOOKS, ids=lambda look: look.batch.split()[0])
def test_each_recorded_first_look_is_the_one_the_data_readme_records(look: FirstLook) -> None:
    text = " ".join(README.read_text().split())
    for pair in {look.before, look.adopted, look.binseg}:
        assert f"{pair[0]:.3f} / {pair[1]:.3f}" in text, (look.batch, pair)
