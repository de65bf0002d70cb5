"""Warning signs on data where nothing changed, with the dependence real probes have."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
from scipy.signal import lfilter

from pipeline.analysis.warning_signs import warning_signs

_PENALTY = pl.DataFrame(
    schema={"provider": pl.Utf8, "model": pl.Utf8, "hour": pl.Datetime("us", "UTC"),
            "penalty": pl.Float64}
)  # fmt: skip
_INCIDENTS = pl.DataFrame(schema={"vendor": pl.Utf8, "start_date": pl.Date, "end_date": pl.Date})


def _bursty_errors(rng: np.random.Generator, days: int = 31) -> pl.DataFrame:
    """60 probes an hour, 2 % busy errors on average, but the rate of each hour is scaled by
    a log-normal factor (sd 1) that persists from hour to hour (AR(1), rho 0.7): bursts."""
    n = days * 24
    rho, sd = 0.7, 1.0
    log_mult = lfilter([1.0], [1.0, -rho], rng.normal(0, sd * np.sqrt(1 - rho**2), n))
    rate = np.clip(0.02 * np.exp(log_mult - sd**2 / 2), 0, 0.5)
    trials = np.full(n, 60)
    busy = rng.binomial(trials, rate)
    start = datetime(2026, 3, 2, tzinfo=UTC)
    return pl.DataFrame({
        "provider": "p", "model": "m", "hour": [start + timedelta(hours=h) for h in range(n)],
        "n": trials, "n_busy": busy, "n_scored": trials - busy, "n_correct": trials - busy,
        "n_flagged": np.zeros(n, dtype=np.int64), "requests_limit": None, "tokens_limit": None,
    }).with_columns(
        pl.col("requests_limit", "tokens_limit").cast(pl.Float64),
        pl.col("hour").cast(pl.Datetime("us", "UTC")),
    )  # fmt: skip


def test_bursty_busy_errors_keep_the_level_and_the_interval_its_coverage() -> None:
    """The pooled exact test treated every probe as independent: on bursty errors that did
    not change it gave p < 0.05 in about 23 % of windows and its 95 % rate-ratio interval
    covered 'no change' about half the time. With counts divided by the baseline's
    day-to-day dispersion: about 5 % and 95 %."""
    rng = np.random.default_rng(11)
    reps = 200
    small_p = covered = 0
    for _ in range(reps):
        signs = warning_signs(_bursty_errors(rng), _PENALTY, _INCIDENTS, {})
        busy = next(s for s in signs if s.sign == "more_busy_errors")
        small_p += busy.pvalue < 0.05
        covered += busy.effect_lo <= 0.0 <= busy.effect_hi
    # 5 % of 200 is 10 +- 3.1; 18 is beyond 2.5 sd
    assert small_p <= 18, small_p
    assert covered >= 0.90 * reps, covered
