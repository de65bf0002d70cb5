"""fixed_prompt answers as a distribution, and their place in the fixed-answers sign."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

from pipeline.analysis.answer_distribution import answer_shift, fixed_prompt_shifts
from pipeline.analysis.warning_signs import SignResult
from pipeline.drift.signs import SIGN, with_fixed_prompt

END = datetime(2026, 3, 20, tzinfo=UTC)


def _answers(rng: np.random.Generator, n: int, weights: list[float]) -> list[str | None]:
    picks = rng.choice(["7", "3", "5", None], size=n, p=weights)
    return [None if p is None else str(p) for p in picks]


def test_the_g_test_finds_a_moved_answer_distribution_and_keeps_its_size() -> None:
    rng = np.random.default_rng(3)
    calm = [0.6, 0.2, 0.15, 0.05]
    moved = answer_shift(_answers(rng, 200, calm), _answers(rng, 60, [0.3, 0.4, 0.25, 0.05]))
    assert moved.p_value < 0.001 and moved.tv > 0.2
    null_p = [
        answer_shift(_answers(rng, 200, calm), _answers(rng, 60, calm)).p_value for _ in range(300)
    ]
    assert 0.02 <= float(np.mean(np.array(null_p) < 0.05)) <= 0.09
    assert answer_shift(["7"] * 5, ["7"] * 5).p_value == 1.0


def _rows(recent_weights: list[float]) -> pl.DataFrame:
    rng = np.random.default_rng(5)
    before = _answers(rng, 120, [0.6, 0.2, 0.15, 0.05])
    after = _answers(rng, 40, recent_weights)
    times = [END - timedelta(days=20, minutes=-i) for i in range(120)]
    times += [END - timedelta(days=2, minutes=-i) for i in range(40)]
    return pl.DataFrame({
        "provider": "p", "model": "m", "started_at": times, "task_family": "fixed_prompt",
        "extracted_answer": before + after,
    })  # fmt: skip


def test_without_a_drift_baseline_the_g_test_is_the_sign() -> None:
    shifts = fixed_prompt_shifts(_rows([0.1, 0.7, 0.15, 0.05]), END - timedelta(days=3))
    (sign,) = with_fixed_prompt([], shifts, END)
    assert sign.sign == SIGN and sign.worse and sign.pvalue < 0.001
    assert sign.detail.startswith("answers to the fixed_prompt question: TV 0.")
    # the counts say what they count
    assert re.search(r"baseline \(\d+ answers\) and the last 3 days \(\d+ answers\)", sign.detail)


def test_with_a_drift_baseline_both_tests_share_one_bonferroni_p() -> None:
    shifts = fixed_prompt_shifts(_rows([0.6, 0.2, 0.15, 0.05]), END - timedelta(days=3))
    (shift,) = shifts.values()
    drift = SignResult(
        "p", "m", SIGN, END, END, END, END, 0.0, 0.0, 0.0, 0.2, "border-input TV",
        "answers to fixed questions as before", False,
    )  # fmt: skip
    (sign,) = with_fixed_prompt([drift], shifts, END)
    assert sign.pvalue == pytest.approx(min(1.0, 2 * min(0.2, shift.p_value)))
    assert "G-test p=" in sign.detail and "Bonferroni" in sign.test
    assert not sign.worse


def test_a_detectable_but_small_move_is_named_as_such_not_as_a_change() -> None:
    """Thousands of answers make a TV of 0.08 significant; it stays under the size worth
    reporting, and the sentence says both, so "as before" beside p=1e-05 is not a riddle."""
    before = ["7"] * 6000 + ["3"] * 4000
    after = ["7"] * 520 + ["3"] * 480  # TV 0.08
    shift = answer_shift(before, after)
    assert shift.p_value < 1e-4 and shift.tv == pytest.approx(0.08)
    (sign,) = with_fixed_prompt([], {("p", "m"): shift}, END)
    assert not sign.worse
    assert "detectable, but under the TV 0.10 reported as a change" in sign.detail
    near = answer_shift(before, ["7"] * 5004 + ["3"] * 4996)  # TV 0.0996, not "0.10"
    (close,) = with_fixed_prompt([], {("p", "m"): near}, END)
    assert "TV 0.0996 " in close.detail and "detectable, but" in close.detail, close.detail
    large = answer_shift(before, ["7"] * 300 + ["3"] * 700)
    (moved,) = with_fixed_prompt([], {("p", "m"): large}, END)
    assert moved.worse and "detectable, but" not in moved.detail
