"""detect(): known answers on constructed series (steps, spread, spikes, gaps, edge cases)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.analysis.changepoints import binseg_mean, detect, pelt_mean, robust_scale


def _near(found: list[int], truth: list[int], margin: int = 5) -> bool:
    return len(found) == len(truth) and all(
        abs(f - t) <= margin for f, t in zip(found, truth, strict=False)
    )


@pytest.mark.parametrize("size", [1.0, 2.0, 4.0])
def test_mean_steps_of_varied_size(size: float) -> None:
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.normal(0, 1, 300), rng.normal(size, 1, 300), rng.normal(0, 1, 300)])
    assert _near(detect(x), [300, 600], margin=int(15 / size))


def test_no_change_returns_empty_mostly() -> None:
    rng = np.random.default_rng(2)
    alarms = sum(bool(detect(rng.normal(size=n))) for n in [50, 200, 1000, 3000] * 10)
    assert alarms <= 1


def test_heavy_tails_do_not_raise_false_alarms() -> None:
    rng = np.random.default_rng(3)
    alarms = sum(bool(detect(rng.standard_t(3, size=1000))) for _ in range(20))
    assert alarms <= 1


def test_single_spikes_are_not_change_points() -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=500)
    x[[50, 200, 201, 400]] += [40.0, -30.0, 25.0, 60.0]
    assert detect(x) == []


def test_step_found_through_outliers_and_heavy_tails() -> None:
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_t(3, 400), 3 + rng.standard_t(3, 400)])
    x[[100, 500]] = [50.0, -50.0]
    assert _near(detect(x), [400])


def test_variance_change_is_found() -> None:
    rng = np.random.default_rng(6)
    x = np.concatenate([rng.normal(0, 1, 400), rng.normal(0, 4, 400)])
    assert _near(detect(x), [400], margin=15)


def test_nan_gaps_map_back_to_original_positions() -> None:
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.normal(0, 1, 300), rng.normal(3, 1, 300)])
    x[100:150] = np.nan
    x[290:305] = np.nan
    found = detect(x)
    assert len(found) == 1 and 300 <= found[0] <= 310
    assert np.isfinite(x[found[0]])


def test_scale_free() -> None:
    rng = np.random.default_rng(8)
    base = np.concatenate([rng.normal(0, 1, 200), rng.normal(2.5, 1, 200)])
    assert detect(base) == detect(base * 1e-9 + 5) == detect(base * 1e9)


def test_spread_changes_are_scale_free_up_to_the_float_range() -> None:
    """The spread search squares second differences: near 1e200 that overflowed (an
    exception, not a row), though only their ratios matter."""
    rng = np.random.default_rng(18)
    base = np.concatenate([rng.normal(0, 1, 200), rng.normal(0, 4, 200)])
    found = detect(base)
    assert found and all(abs(b - 200) <= 10 for b in found)
    assert detect(base * 1e200) == detect(base * 1e-200) == found
    growth = np.exp(np.linspace(0.0, 700.0, 24))  # 1 to 1e304
    assert all(0 < b < growth.size for b in detect(growth))


def test_autocorrelated_noise_and_trend_are_not_cut() -> None:
    rng = np.random.default_rng(9)
    e = np.zeros(1500)
    for i in range(1, e.size):
        e[i] = 0.7 * e[i - 1] + rng.normal()
    assert detect(e) == []
    assert detect(np.linspace(0, 8, 600) + rng.normal(size=600)) == []


@pytest.mark.parametrize(
    "values",
    [[], [1.0], [1.0, 2.0], [np.nan] * 10, [5.0] * 100, [np.inf, 1.0, -np.inf]],
)
def test_degenerate_inputs(values: list[float]) -> None:
    assert detect(np.asarray(values, dtype=float)) == []


def test_noiseless_steps() -> None:
    x = np.repeat([1.0, 5.0, 2.0], 50)
    assert detect(x) == [50, 100]


def test_result_is_sorted_and_inside_bounds() -> None:
    rng = np.random.default_rng(10)
    x = np.concatenate([rng.normal(m, 1, 80) for m in (0, 3, -1, 4, 0)])
    found = detect(x)
    assert found == sorted(found)
    assert all(0 < f < x.size for f in found)
    assert _near(found, [80, 160, 240, 320])


def test_long_series_uses_binary_segmentation_and_still_finds_steps() -> None:
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.normal(0, 1, 50_000), rng.normal(0.8, 1, 50_000)])
    assert _near(detect(x), [50_000], margin=50)


def test_pelt_and_binseg_agree_on_clear_steps() -> None:
    rng = np.random.default_rng(12)
    x = np.concatenate([rng.normal(0, 1, 500), rng.normal(5, 1, 500)])
    pen = 3 * np.log(x.size)
    assert pelt_mean(x, pen, 5) == binseg_mean(x, pen, 5) == [500]


def test_robust_scale_ignores_level_shifts() -> None:
    rng = np.random.default_rng(13)
    x = np.concatenate([rng.normal(0, 2, 2000), rng.normal(100, 2, 2000)])
    assert robust_scale(x) == pytest.approx(2.0, rel=0.1)
