"""The phases' accuracy test when wrong answers cluster by day, and when they do not."""

from __future__ import annotations

import numpy as np

from pipeline.analysis.effects import fisher_one_sided
from pipeline.analysis.phases import ProviderSeries, _compare

START = np.datetime64("2026-01-05T00", "h")
DAYS = 24
PER_HOUR = 12  # scored answers an hour (a short and a long probe every 10 minutes)
WRONG = 0.05
ALPHA = 0.01  # the phases' level (phases._ALPHA)
BASE, SEG = (0, 21 * 24), (21 * 24, 24 * 24)  # fixed in advance: only the test is measured


def _wrong_by_day_batch(rng: np.random.Generator) -> np.ndarray:
    """Each day's probes draw from that day's batch of 24 items, and whether the model gets
    an item wrong is mostly fixed (item wrong-probability Beta with mean 5 %, concentration
    0.5): a day with a few hard items has many wrong answers. No change anywhere."""
    out = np.zeros(DAYS * 24, dtype=np.int64)
    a, b = 0.5 * WRONG, 0.5 * (1 - WRONG)
    for d in range(DAYS):
        item_wrong = rng.beta(a, b, 24)
        asked = rng.integers(0, 24, (24, PER_HOUR))
        out[d * 24 : (d + 1) * 24] = (rng.random((24, PER_HOUR)) < item_wrong[asked]).sum(1)
    return out


def _series(rng: np.random.Generator, wrong: np.ndarray) -> ProviderSeries:
    n = DAYS * 24
    scored = np.full(n, PER_HOUR, dtype=np.int64)
    return ProviderSeries(
        hours=START + np.arange(n), short=np.log(400) + rng.normal(0, 0.08, n), long=None,
        n=scored, n_errors=np.zeros(n, dtype=np.int64), n_scored=scored,
        n_correct=scored - wrong, n_flagged=None,
    )  # fmt: skip


def test_wrong_answers_clustered_by_day_keep_the_accuracy_test_near_its_level() -> None:
    """The old plain exact test on pooled answers: p < 0.01 in 64 of 300 changeless runs;
    with counts divided by the baseline's day dispersion: 2 of 300."""
    rng = np.random.default_rng(31)
    reps = 300
    plain = tested = 0
    for _ in range(reps):
        wrong = _wrong_by_day_batch(rng)
        tested += _compare(_series(rng, wrong), SEG, BASE).pvalues["accuracy"] < ALPHA
        w_b, w_a = int(wrong[: SEG[0]].sum()), int(wrong[SEG[0] :].sum())
        plain += fisher_one_sided(w_b, SEG[0] * PER_HOUR, w_a, 3 * 24 * PER_HOUR) < ALPHA
    assert plain >= 0.10 * reps, plain  # the clustering matters: the old test's rate
    assert tested <= 0.04 * reps, tested


def test_independent_wrong_answers_keep_their_power() -> None:
    """Independent answers (as the simulator draws them): the factor is about 1, so a rise
    from 5 % to 9 % wrong over 3 days is still found in 97 of 100 runs (plain test: 98)."""
    rng = np.random.default_rng(32)
    reps, found = 100, 0
    rate = np.where(np.arange(DAYS * 24) >= SEG[0], WRONG + 0.04, WRONG)
    for _ in range(reps):
        s = _series(rng, rng.binomial(PER_HOUR, rate))
        found += "accuracy" in _compare(s, SEG, BASE).moved
    assert found >= 0.9 * reps, found
