"""Every provider failing at once, said above the verdicts.

Each verdict reads its own provider's outage ("Failing now", a major degradation with
high confidence). When every provider probed this week has failed every probe for hours
together, the data cannot tell N provider outages from one fault on the probing side (the
prober's network, DNS, proxy or API keys); the error classes help tell them apart, so the
report shows them and says so once, before the verdicts.
"""

from __future__ import annotations

import polars as pl

from pipeline.report import fmt
from pipeline.report.data import ReportData
from pipeline.report.failing_now import FailingNow, failing_now

__all__ = ["all_failing"]


def _classes(data: ReportData, providers: list[str], runs: list[FailingNow]) -> str:
    since = max(r.since for r in runs).replace(hour=0)  # errors are counted by day
    errors = data.errors_daily.filter(
        pl.col("provider").is_in(providers)
        & (pl.col("day") >= since)
        & pl.col("error_class").is_not_null()
        & (pl.col("error_class") != "ok")
    )
    counts = errors.group_by("error_class").agg(pl.col("n").sum()).sort("n", descending=True)
    return ", ".join(f"{r['error_class']} {r['n']:,}" for r in counts.iter_rows(named=True))


def all_failing(data: ReportData) -> str:
    """The words when two providers or more probed this week all fail now; "" otherwise."""
    providers = sorted({str(p) for p in data.week_stats["provider"].to_list()})
    if len(providers) < 2:
        return ""  # one provider's outage is its verdict's to tell
    runs = []
    for provider in providers:
        run = failing_now(data.history_hours.filter(pl.col("provider") == provider))
        if run is None:
            return ""
        runs.append(run)
    since = max(r.since for r in runs)
    probes = data.history_hours.filter(
        pl.col("provider").is_in(providers) & (pl.col("hour") >= since)
    )["n"].sum()
    classes = _classes(data, providers, runs)
    return (
        f"Every provider has failed every probe since {fmt.stamp(since)} "
        f"({fmt.count(int(probes), 'probe')}"
        + (f"; errors since that day: {classes}" if classes else "")
        + "). When all fail together the cause may be on the probing side (its network, "
        f"DNS, proxy or API keys) rather than at {len(providers)} providers at once: check "
        "that before reading the verdicts below as separate outages."
    )
