"""Release-cycle analysis: do degradation phases precede model releases?

* Onsets: the start of each chain of non-stable phases (a degraded phase following a stable
  one, or the first phase if the series starts degraded is *not* an onset: its start is
  unknown).
* Lead time per release: release date minus the latest onset in the 120 days before it.
* Event study: daily TTFT from 120 days before to 60 after each release, relative to the
  pre-period (days -120..-61) median.
* Clustering test: the share of onsets falling within 90 days before a release of the
  provider's own vendor, against the same number of onsets placed at random dates (uniform
  over the observed span, Monte Carlo). Assumes onsets would be independent under the null.
  Few onsets cannot give a small p-value, which is reported as such. The pooled test counts
  the same pairs: each provider's onsets against its own vendor's releases, summed over the
  providers that have releases, so the per-provider counts add up to the pooled one.
* Synchronization: for each pair of providers, the share of days both are degraded
  (Jaccard), against circular shifts of one series.
* Forecast of the next release while a degradation is ongoing: onset + the provider's own
  lead times seen so far (prediction interval from their spread), so the lead times shown
  beside a forecast are the ones it rests on. Conclusive only with >= 3 observed lead
  times and a clustering p-value below 5 %; otherwise stated as inconclusive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo

import numpy as np
from numpy.typing import NDArray
from scipy import stats

__all__ = [
    "Forecast",
    "clustering_test",
    "event_study",
    "forecast_release",
    "lead_times",
    "onsets",
    "pooled_clustering_test",
    "synchronization_test",
]

MAX_LEAD_DAYS = 120
POST_DAYS = 60
CLUSTER_WINDOW_DAYS = 90


@dataclass(frozen=True)
class Forecast:
    expected: date | None
    lo: date | None
    hi: date | None
    conclusive: bool
    basis: str


MIN_STABLE_BEFORE = timedelta(hours=72)  # phases.MIN_BASELINE_HOURS: a normal to depart from


def onsets(phases: list[tuple[str, datetime]]) -> list[datetime]:
    """Starts of degradation chains from (label, start) pairs in time order. A departure
    needs a normal to depart from: the stable phase before it must have lasted as long as
    a baseline needs (three days), or the start of the data passes for an onset."""
    out = []
    for i, (label, start) in enumerate(phases):
        if label != "degraded" or i == 0 or phases[i - 1][0] != "stable":
            continue
        if start - phases[i - 1][1] >= MIN_STABLE_BEFORE:
            out.append(start)
    return out


def lead_times(
    onset_times: list[datetime], releases: list[date]
) -> list[tuple[date, datetime | None, float | None]]:
    """(release, onset, lead days) with the latest onset within 120 days before each release."""
    out: list[tuple[date, datetime | None, float | None]] = []
    for rel in sorted(releases):
        rel_dt = datetime(rel.year, rel.month, rel.day, tzinfo=_tz(onset_times))
        cands = [o for o in onset_times if timedelta(0) <= rel_dt - o <= timedelta(MAX_LEAD_DAYS)]
        if cands:
            onset = max(cands)
            out.append((rel, onset, (rel_dt - onset).total_seconds() / 86400))
        else:
            out.append((rel, None, None))
    return out


def _tz(times: list[datetime]) -> tzinfo | None:
    return times[0].tzinfo if times else None


def event_study(
    days: NDArray[np.datetime64], values: NDArray[np.float64], release: date
) -> list[tuple[int, float, float]]:
    """(day offset, value, value / pre-period median) for offsets -120..60 with data."""
    rel = np.datetime64(release, "D")
    offsets = (days.astype("datetime64[D]") - rel).astype(np.int64)
    sel = (offsets >= -MAX_LEAD_DAYS) & (offsets <= POST_DAYS) & np.isfinite(values)
    pre = values[(offsets >= -MAX_LEAD_DAYS) & (offsets < -60) & np.isfinite(values)]
    if pre.size == 0:
        pre = values[(offsets < 0) & np.isfinite(values)]
    base = float(np.median(pre)) if pre.size else float("nan")
    return [
        (int(o), float(v), float(v / base) if base and math.isfinite(base) else float("nan"))
        for o, v in zip(offsets[sel], values[sel], strict=True)
    ]


def _hits(onset_days: NDArray[np.float64], release_days: NDArray[np.float64]) -> NDArray[np.int64]:
    """Onsets within 90 days before a release, counted along the last axis."""
    gap = release_days[None, :] - onset_days[..., None]
    return np.asarray(((gap >= 0) & (gap <= CLUSTER_WINDOW_DAYS)).any(axis=-1).sum(axis=-1))


def _days_after(t0: datetime, moments: list[datetime]) -> NDArray[np.float64]:
    return np.array([(m - t0).total_seconds() / 86400 for m in moments])


def clustering_test(
    onset_times: list[datetime],
    releases: list[date],
    span: tuple[datetime, datetime],
    reps: int = 2000,
    seed: int = 0,
) -> tuple[float, float, int]:
    """(share of onsets within 90 days before a release, p-value, number of onsets)."""
    if not onset_times or not releases:
        return float("nan"), float("nan"), len(onset_times)
    return pooled_clustering_test([(onset_times, releases)], span, reps=reps, seed=seed)


def pooled_clustering_test(
    groups: list[tuple[list[datetime], list[date]]],
    span: tuple[datetime, datetime],
    reps: int = 2000,
    seed: int = 0,
) -> tuple[float, float, int]:
    """The clustering test over several providers, each (onsets, its own vendor's releases).

    Returns (share of the counted onsets within 90 days before a release of their own
    vendor, p-value, onsets counted). Providers without onsets or releases are left out, so
    the count is the sum of the per-provider counts that could be tested. The null places
    every provider's onsets at random dates and counts them against that provider's releases.
    """
    testable = [(o, r) for o, r in groups if o and r]
    if not testable:
        return float("nan"), float("nan"), 0
    t0 = span[0]
    length = max((span[1] - t0).total_seconds() / 86400, 1.0)
    rng = np.random.default_rng(seed)
    observed, null, n = 0, np.zeros(reps, dtype=np.int64), 0
    for onset_times, releases in testable:
        on = _days_after(t0, onset_times)
        rel = _days_after(
            t0, [datetime(r.year, r.month, r.day, tzinfo=t0.tzinfo) for r in releases]
        )
        observed += int(_hits(on, rel))
        null += _hits(rng.uniform(0, length, size=(reps, on.size)), rel)
        n += on.size
    p = float((1 + np.sum(null >= observed)) / (reps + 1))
    return observed / n, p, n


_SHIFT_CHUNK = 256  # circular shifts evaluated together in synchronization_test


def synchronization_test(
    a: NDArray[np.bool_], b: NDArray[np.bool_], reps: int = 1000, seed: int = 0
) -> tuple[float, float]:
    """(Jaccard of degraded days, p-value against circular shifts of ``b``)."""
    union = int(np.sum(a | b))
    if union == 0 or a.size < 14:
        return float("nan"), float("nan")
    observed = float(np.sum(a & b)) / union
    rng = np.random.default_rng(seed)
    shifts = rng.integers(1, a.size, size=reps)
    null = np.empty(reps)
    days = np.arange(a.size)
    for r in range(0, reps, _SHIFT_CHUNK):  # all shifts at once, in chunks to bound memory
        part = shifts[r : r + _SHIFT_CHUNK]
        rolled = b[(days[None, :] - part[:, None]) % a.size]  # np.roll(b, s) per row
        both = np.sum(a & rolled, axis=1)
        either = np.maximum(np.sum(a | rolled, axis=1), 1)
        null[r : r + part.size] = both / either
    return observed, float((1 + np.sum(null >= observed - 1e-12)) / (reps + 1))


def forecast_release(onset: datetime, leads: list[float], cluster_p: float) -> Forecast:
    """Next release window from an ongoing degradation's onset and lead times seen so far."""
    m = len(leads)
    if m == 0:
        return Forecast(None, None, None, False, "no lead time observed yet: inconclusive")
    mean = float(np.mean(leads))
    expected = (onset + timedelta(days=mean)).date()
    if m == 1:
        lo, hi = expected - timedelta(days=30), expected + timedelta(days=30)
        return Forecast(expected, lo, hi, False, f"one lead time ({mean:.0f} d): inconclusive")
    sd = float(np.std(leads, ddof=1))
    half = float(stats.t.ppf(0.9, m - 1)) * sd * math.sqrt(1 + 1 / m)
    half = max(half, 7.0)
    lo = (onset + timedelta(days=mean - half)).date()
    hi = (onset + timedelta(days=mean + half)).date()
    conclusive = m >= 3 and math.isfinite(cluster_p) and cluster_p < 0.05
    listed = ", ".join(f"{lead:.0f}" for lead in leads)
    basis = (
        f"onset {onset.date()} + mean of lead times {listed} d = {mean:.0f} d (sd {sd:.0f} d), "
        f"80 % prediction interval; clustering p={cluster_p:.3g}"
    )
    if not conclusive:
        basis += ": inconclusive (needs >= 3 lead times and clustering p < 0.05)"
    return Forecast(expected, lo, hi, conclusive, basis)
