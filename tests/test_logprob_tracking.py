"""Log-probability tracking: imputation and the permutation test's size and power."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.analysis.logprob_tracking import imputed_matrix, logprob_test


def test_a_token_missing_from_a_call_gets_that_calls_smallest_logprob() -> None:
    tokens, matrix = imputed_matrix([{"a": -1.0, "b": -2.0}, {"a": -0.5, "c": -3.0}])
    assert tokens == ["a", "b", "c"]
    assert matrix.tolist() == [[-1.0, -2.0, -2.0], [-0.5, -3.0, -3.0]]


def test_identical_windows_give_p_1_and_any_change_the_smallest_p() -> None:
    row = {"a": -1.0, "b": -1.5}
    same = logprob_test([row] * 10, [row] * 10, seed=0, permutations=199)
    assert same.statistic == 0.0 and same.p_value == 1.0
    moved = logprob_test([row] * 10, [{"a": -1.001, "b": -1.5}] * 10, seed=0, permutations=199)
    assert moved.p_value <= 2 / 200  # the swapped labelling ties the observed split
    assert moved.statistic == pytest.approx(0.001)


def _noisy(rng: np.random.Generator, n: int, shift: float) -> list[dict[str, float]]:
    base = np.array([-1.0, -1.4, -2.0, -2.5])
    rows = base + shift * np.array([1, -1, 0, 0]) + rng.normal(0, 0.05, (n, 4))
    return [dict(zip("abcd", r.tolist(), strict=True)) for r in rows]


def test_on_noisy_rows_the_size_is_near_alpha_and_a_shift_is_found() -> None:
    rng = np.random.default_rng(11)
    null_p = [
        logprob_test(_noisy(rng, 20, 0), _noisy(rng, 20, 0), seed=i, permutations=199).p_value
        for i in range(200)
    ]
    rate = np.mean(np.array(null_p) <= 0.05)
    assert 0.015 <= rate <= 0.09, rate  # binomial(200, 0.05): 95 % within about 0.02-0.08
    shifted = logprob_test(_noisy(rng, 20, 0), _noisy(rng, 20, 0.05), seed=1, permutations=199)
    assert shifted.p_value <= 0.01


def test_a_window_without_logprobs_is_refused() -> None:
    with pytest.raises(ValueError, match="both windows"):
        logprob_test([{"a": -1.0}], [{}], seed=0)
