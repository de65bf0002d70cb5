"""Where to send traffic now: one pick per context class, or why there is none.

A pick must be a provider a demanding reader would act on, so the rule is:

* it has a baseline (``MIN_BASELINE_HOURS`` answered hours), or whether it is degraded
  is unknown; it was probed lately; and it gave at least ``MIN_PICK_ANSWERS`` answers
  with a TTFT in the class this week. Providers left out are named, with the reason;
* among those, the healthy ones (not in a degraded phase, not failing now) within 2
  points of the best availability, the fastest by median TTFT;
* unless the runner-up's 95 % interval for its median overlaps the fastest's: then it
  is "no clear pick", and the tied providers are named. The intervals are
  distribution-free (order statistics) but assume independent answers; answers an hour
  apart share load, so they are if anything too narrow, and the overlap rule (stricter
  than a 5 % test of the difference) keeps a false "clear" pick rare.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from pipeline.report import fmt
from pipeline.report.baseline import MIN_BASELINE_HOURS, answered_hours
from pipeline.report.context import Recommendation
from pipeline.report.data import ReportData
from pipeline.report.failing_now import failing_now
from pipeline.report.verdicts import current_phase, not_probed_lately

__all__ = ["MIN_PICK_ANSWERS", "recommendations"]

MIN_PICK_ANSWERS = 30  # the median's 95 % interval then spans about ranks 10 to 21
_MIN_PROBES = 5  # fewer probes of a class in a week say nothing about it
_AVAILABILITY_SLACK = 0.02


def _hours(data: ReportData, provider: str) -> pl.DataFrame:
    return data.history_hours.filter(pl.col("provider") == provider)


def _unhealthy(data: ReportData, provider: str) -> bool:
    phase = current_phase(data.result("phases"), provider, data.now)
    degraded = (
        phase is not None
        and phase["label"] == "degraded"
        and (phase["end_at"] is None or phase["end_at"] > data.now)
    )
    return degraded or failing_now(_hours(data, provider)) is not None


def _left_out(data: ReportData, rows: pl.DataFrame) -> dict[str, str]:
    """Providers that cannot be picked, each with the reason in words."""
    out = {}
    for row in rows.iter_rows(named=True):
        provider = str(row["provider"])
        if not_probed_lately(data, provider):
            last = fmt.stamp(data.last_probe(provider))
            out[provider] = f"not probed for a day or more (last probed {last})"
        elif answered_hours(_hours(data, provider)) < MIN_BASELINE_HOURS:
            out[provider] = f"no baseline yet ({MIN_BASELINE_HOURS} answered hours needed)"
        elif int(row["n_ttft"]) < MIN_PICK_ANSWERS:
            out[provider] = f"{int(row['n_ttft'])} answers this week, under {MIN_PICK_ANSWERS}"
    return out


def _left_out_words(left: dict[str, str]) -> str:
    if not left:
        return ""
    return " Left out: " + "; ".join(f"{p}, {why}" for p, why in left.items()) + "."


def _with_bounds(data: ReportData, rows: pl.DataFrame, cls: str) -> pl.DataFrame:
    bounds = data.median_bounds
    if bounds.height == 0:
        return rows.with_columns(p50_lo=pl.lit(None, pl.Float64), p50_hi=pl.lit(None, pl.Float64))
    part = bounds.filter(pl.col("context_class") == cls).select("provider", "p50_lo", "p50_hi")
    return rows.join(part, on="provider", how="left")


def _median(row: dict[str, Any]) -> str:
    """ "427 ms (95 % CI 423 ms–430 ms, 4,991 answers)": a median with what it rests on."""
    interval = ""
    if row["p50_lo"] is not None and row["p50_hi"] is not None:
        interval = f"95 % CI {fmt.ms(row['p50_lo'])}–{fmt.ms(row['p50_hi'])}, "
    return f"{fmt.ms(row['ttft_p50'])} ({interval}{int(row['n_ttft']):,} answers)"


def _no_pick(data: ReportData, cls: str, ran: pl.DataFrame) -> Recommendation | None:
    """The weeks with nothing to compare at all, said as before any rule applies."""
    if ran.height == 0:
        return Recommendation(cls, None, f"No {cls}-context probes ran this week.")
    enough = ran.filter(pl.col("n") >= _MIN_PROBES)
    if enough.height == 0:
        have = ", ".join(f"{r['provider']} {r['n']}" for r in ran.iter_rows(named=True))
        most = int(ran["n"].max())  # type: ignore[arg-type]
        return Recommendation(
            cls,
            None,
            f"Too few {cls}-context probes this week to recommend a provider ({have}): a "
            f"pick needs at least {_MIN_PROBES} per provider, {_MIN_PROBES - most} more "
            "at the least.",
        )
    if enough.filter((pl.col("n_ok") > 0) & pl.col("ttft_p50").is_not_null()).height == 0:
        have = ", ".join(
            f"{r['provider']} {r['n_ok']} of {r['n']}" for r in enough.iter_rows(named=True)
        )
        return Recommendation(
            cls,
            None,
            f"No provider answered a {cls}-context probe with a measured TTFT this week "
            f"(successes: {have}): there is nothing to compare.",
        )
    if len(data.provider_names) == 1:
        return Recommendation(
            cls,
            None,
            f"Only {data.provider_names[0]} is monitored: there is nothing to fall "
            "back to. Add a second provider to get a recommendation.",
        )
    return None


def _pick(data: ReportData, cls: str) -> Recommendation:
    ran = data.week_stats.filter(pl.col("context_class") == cls)
    early = _no_pick(data, cls, ran)
    if early is not None:
        return early
    rows = ran.filter((pl.col("n") >= _MIN_PROBES) & pl.col("ttft_p50").is_not_null())
    left = _left_out(data, rows)
    rows = rows.filter(~pl.col("provider").is_in(list(left))).with_columns(
        (pl.col("n_ok") / pl.col("n")).alias("availability")
    )
    if rows.height == 0:
        return Recommendation(
            cls,
            None,
            f"No provider qualifies: a pick needs a baseline, a probe within the last day "
            f"and at least {MIN_PICK_ANSWERS} {cls}-context answers this week."
            + _left_out_words(left),
        )
    healthy = rows.filter(~pl.col("provider").map_elements(
        lambda p: _unhealthy(data, str(p)), return_dtype=pl.Boolean
    ))  # fmt: skip
    pool = healthy if healthy.height else rows
    best = float(pool["availability"].max())  # type: ignore[arg-type]
    pool = pool.filter(pl.col("availability") >= best - _AVAILABILITY_SLACK).sort("ttft_p50")
    pool = _with_bounds(data, pool, cls)
    leader = pool.row(0, named=True)
    basis = "not in a degradation phase" if healthy.height else "every provider is degraded"
    if data.analysis_run is None:  # no phases at all: "not degraded" would be a guess
        basis = "not analysed yet, so whether it is degraded is unknown"
    tied = [r for r in list(pool.iter_rows(named=True))[1:] if _overlaps(leader, r)]
    if tied:
        both = [leader, *tied]
        return Recommendation(
            cls,
            None,
            f"{', '.join(str(r['provider']) for r in both)} are "
            f"{_plural(basis) if healthy.height else 'all degraded'} and within 2 points of "
            "the best availability, and their median TTFTs are tied within the 95 % intervals ("
            + "; ".join(f"{r['provider']} {_median(r)}" for r in both)
            + ("). Either will do." if len(both) == 2 else "). Any of them will do.")
            + _left_out_words(left),
            tied=tuple(str(r["provider"]) for r in both),
        )
    runner = pool.row(1, named=True) if pool.height > 1 else None
    ahead = f", clear of the next fastest, {runner['provider']} {_median(runner)}" if runner else ""
    return Recommendation(
        cls,
        str(leader["provider"]),
        f"{basis}; availability {fmt.pct(leader['availability'])}, TTFT p50 "
        f"{_median(leader)} this week{ahead} (the fastest among those within 2 points of "
        f"the best availability).{_left_out_words(left)}",
    )


def _plural(basis: str) -> str:
    return basis.replace("whether it is", "whether they are")


def _overlaps(leader: dict[str, Any], other: dict[str, Any]) -> bool:
    """Whether ``other``'s median interval reaches down to the leader's; unknown counts
    as overlapping (a tie is the cautious reading)."""
    if leader["p50_hi"] is None or other["p50_lo"] is None:
        return True
    return float(other["p50_lo"]) <= float(leader["p50_hi"])


def recommendations(data: ReportData) -> list[Recommendation]:
    """Where to send short- and long-context traffic now."""
    return [_pick(data, "short"), _pick(data, "long")]
