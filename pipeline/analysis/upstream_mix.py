"""Which upstreams served a routed model name, recent window against baseline.

OpenRouter routes one model name to several upstreams (``upstream_provider``, its chunk
``provider``), which may run other quantizations or serving stacks: traffic moving to other
upstreams is the plainest sign that another model answers under the same name.

Effect: the total variation distance between the two mixes (the share of calls that would
have to change upstream to turn one mix into the other); reported from
``MIN_MIX_SHIFT``.

Test: days are the unit (a router may stick to one upstream for hours, which a per-call
G-test would read as a change), and days are dependent too: a stint of a day or more spans
day borders, so the recent days are alike. A permutation over days, which takes them as
exchangeable, rejected at 5 % in 22 % of histories with day-long stints and 26 % with
two-day ones (benchmarks/bench_upstream_mix_null.py). So each upstream's daily share is
taken as a stationary AR(1) series across days: its lag-1 autocorrelation (pooled over
upstreams, corrected for its small-sample bias, never below 0) and its variance come from
the baseline days. The variance is floored at the routing's stickiness (the baseline's daily
variance as a share of the most a mix can vary, at least that of independent calls) times
the baseline mix smoothed over its effective number of days, so an upstream the baseline
never saw is not read as certain when it takes a stint in the recent days. The recent mean
share less the baseline's, over its standard error under that AR(1), is referred to a t
distribution on the baseline's effective number of days less one; p is the smallest over
upstreams times their number (Bonferroni). Measured (400 histories): at most 3.2 %
rejections at 5 % and 1.0 % at 1 % with no stickiness and stints of 6 h to 48 h; a new
upstream at 50 % on the 3 recent days is found at 1 % in 98.5 % of histories with 6-hour
stints but 16 % with day-long ones, where it looks like a rare upstream's stint. Assumes the
baseline's dependence is the recent days' and that an AR(1) captures it (a router that
switches upstream weekly is not).

The detail ends with the windows it compares, "(windows: the last 3 days against the 28
before)", because D and r count only days with calls: a reader (and the report) can then
say "on 1 of the last 3 days" from the row alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import polars as pl
from scipy import stats

from pipeline.analysis.warning_signs import BASELINE, RECENT

__all__ = ["COLUMN", "MIN_MIX_SHIFT", "UpstreamShift", "mix_testable", "upstream_shift"]

COLUMN = "upstream_provider"
MIN_MIX_SHIFT = 0.20  # total variation distance below which a mix change is not reported
MIN_CALLS = 5  # calls naming their upstream, per window
_BLOCK = timedelta(days=1)
_MAX_RHO = 0.9  # past this, 28 days hold too few independent ones to say anything
_SHOWN = 3  # upstreams named per window; the rest are "others"


def _labelled(rows: pl.DataFrame) -> pl.DataFrame:
    if COLUMN not in rows.columns:
        return rows.clear().select("started_at").with_columns(pl.lit(None, pl.Utf8).alias(COLUMN))
    return rows.filter(pl.col(COLUMN).is_not_null()).select("started_at", COLUMN)


def mix_testable(rows: pl.DataFrame, split_at: datetime) -> bool:
    """Whether the mix test can run on ``rows``: ``MIN_CALLS`` calls naming an upstream on
    each side of ``split_at`` and two upstreams or more between them (one upstream
    throughout is no test). Providers that never send the field have none."""
    named = _labelled(rows)
    before = named.filter(pl.col("started_at") < split_at).height
    after = named.height - before
    return min(before, after) >= MIN_CALLS and named[COLUMN].n_unique() >= 2


@dataclass(frozen=True, slots=True)
class UpstreamShift:
    """The mix change of one provider: its words (no "; ", which separates a sign's
    parts), total variation distance and p-value (AR(1) across days)."""

    detail: str
    distance: float
    p_value: float


def _counts(
    rows: pl.DataFrame, split_at: datetime
) -> tuple[np.ndarray, list[str], int, np.ndarray]:
    """(blocks x upstreams count matrix, upstream names, number of recent blocks, block
    numbers: days from the split); only blocks with calls, recent ones first."""
    block = ((pl.col("started_at") - split_at) / _BLOCK).floor().cast(pl.Int64).alias("block")
    cells = rows.group_by(block, pl.col(COLUMN)).len()
    names = sorted(cells[COLUMN].unique().to_list())
    blocks = sorted(cells["block"].unique().to_list(), reverse=True)
    counts = np.zeros((len(blocks), len(names)))
    row, col = {b: i for i, b in enumerate(blocks)}, {n: i for i, n in enumerate(names)}
    for b, name, n in cells.iter_rows():
        counts[row[b], col[name]] = n
    return counts, names, sum(b >= 0 for b in blocks), np.array(blocks, dtype=np.float64)


def _distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Total variation between the mixes in ``a`` and ``b`` along their last axis (one
    pair of count vectors, or one pair per row)."""
    share_a = a / a.sum(axis=-1, keepdims=True)
    share_b = b / b.sum(axis=-1, keepdims=True)
    return 0.5 * np.abs(share_a - share_b).sum(axis=-1)


def _lag_one(shares: np.ndarray, days: np.ndarray) -> float:
    """Lag-1 autocorrelation of the daily shares (days x upstreams), pooled over upstreams
    and over pairs of consecutive days, bias-corrected ((n rho + 1) / (n - 3), the AR(1)
    estimate's bias), clipped to [0, ``_MAX_RHO``]; the most when it cannot be told."""
    order = np.argsort(days)
    dev = (shares - shares.mean(axis=0))[order]
    adjacent = np.diff(days[order]) == 1
    denominator = float(np.sum(dev**2))
    if denominator == 0:  # one mix every day: the variance floor is the binomial's
        return 0.0
    if not adjacent.any() or days.size <= 4:  # too few days to tell: assume the most
        return _MAX_RHO
    rho = float(np.sum(dev[:-1][adjacent] * dev[1:][adjacent])) / denominator
    return min(max((days.size * rho + 1) / (days.size - 3), 0.0), _MAX_RHO)


def _dependent_days_p(counts: np.ndarray, recent: int, days: np.ndarray) -> float:
    """p of the recent days' mix against the baseline's, each upstream's daily share an
    AR(1) across days whose autocorrelation and variance the baseline gives."""
    shares = counts / counts.sum(axis=1, keepdims=True)
    base, n_base = shares[recent:], counts.shape[0] - recent
    if n_base < 2:
        return 1.0
    rho = _lag_one(base, days[recent:])
    # The sample variance of an AR(1) understates its variance by about this factor.
    shrink = max(1 - 2 * rho / ((1 - rho) * (n_base - 1)), 0.5)
    estimated = base.var(axis=0, ddof=1) / shrink
    # How sticky routing is: the daily shares' variance as a share of the most a mix can
    # vary (every day on one upstream), pooled over upstreams; at least that of independent
    # calls. Applied to the baseline's mix, smoothed over its effective number of days
    # (half a day's worth for each upstream), it keeps an upstream the baseline never saw
    # from reading as certain when it takes a stint in the recent days.
    seen = base.mean(axis=0)
    sticky = max(
        float(np.sum(estimated)) / max(float(np.sum(seen * (1 - seen))), 1e-12),
        1 / float(np.mean(counts.sum(axis=1))),
    )
    effective = n_base * (1 - rho) / (1 + rho)
    smoothed = (seen * effective + 0.5) / (effective + 0.5 * counts.shape[1])
    variance = np.maximum(estimated, min(sticky, 1.0) * smoothed * (1 - smoothed))
    weights = np.where(np.arange(days.size) < recent, 1 / max(recent, 1), -1 / n_base)
    lags = np.abs(days[:, None] - days[None, :])
    scale = float(weights @ (rho**lags) @ weights)
    z = (shares[:recent].mean(axis=0) - base.mean(axis=0)) / np.sqrt(variance * scale)
    p = 2 * stats.t.sf(np.abs(z), df=max(effective - 1, 1.0))
    return float(min(1.0, counts.shape[1] * float(np.min(p))))


def _mix(counts: np.ndarray, names: list[str]) -> str:
    share = counts / counts.sum()
    order = sorted(range(len(names)), key=lambda i: (-share[i], names[i]))
    shown = [f"{names[i]} {share[i] * 100:.0f}\u00a0%" for i in order[:_SHOWN] if share[i] > 0]
    rest = float(sum(share[i] for i in order[_SHOWN:]))
    return ", ".join(shown + ([f"others {rest * 100:.0f}\u00a0%"] if rest > 0 else []))


def _days(span: timedelta) -> str:
    days = round(span / _BLOCK)
    return f"{days} day" if days == 1 else f"{days} days"


def upstream_shift(
    rows: pl.DataFrame,
    split_at: datetime,
    *,
    recent: timedelta = RECENT,
    baseline: timedelta = BASELINE,
) -> UpstreamShift | None:
    """The mix change of one provider's rows (columns started_at, upstream_provider), or
    None when it cannot be tested or moved less than ``MIN_MIX_SHIFT``; ``recent`` and
    ``baseline`` are the windows the rows were cut to, named in the detail."""
    if not mix_testable(rows, split_at):
        return None
    counts, names, n_recent, days = _counts(_labelled(rows), split_at)
    before, after = counts[n_recent:].sum(axis=0), counts[:n_recent].sum(axis=0)
    distance = float(_distance(after, before))
    if distance < MIN_MIX_SHIFT:
        return None
    days_before, days_after = counts.shape[0] - n_recent, n_recent
    detail = (
        f"served by {_mix(before, names)} ({int(before.sum()):,} calls on {days_before} days) -> "
        f"{_mix(after, names)} ({int(after.sum()):,} calls on the last {days_after} days), "
        f"{distance * 100:.0f}\u00a0% of calls moved (windows: the last {_days(recent)} "
        f"against the {round(baseline / _BLOCK)} before)"
    )
    return UpstreamShift(detail, distance, _dependent_days_p(counts, n_recent, days))
