"""Probe sites side by side: one line per (provider, site) for the week, and a sentence
saying whether the latest degradation was seen from one site only or at every site.

Shown only when the week's probes come from two sites or more; a single-site report is
unchanged. The scope is the analysis's (``degradation_scope``, from
``pipeline.analysis.site_scope``): regional, provider-wide, or undecided when the
sites' overlap could be chance.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import polars as pl

from pipeline.report import fmt
from pipeline.report.data import ReportData
from pipeline.report.timeline import CHART_DAYS

__all__ = ["SiteRow", "SitesView", "scope_sentence", "sites_view"]


@dataclass(frozen=True, slots=True)
class SiteRow:
    site: str
    probes: str
    availability: str
    ttft_short: str
    state: str  # the site's own phase during the week, in words


@dataclass(frozen=True, slots=True)
class SitesView:
    """One provider's sites this week and where its latest degradation was seen."""

    provider: str
    rows: list[SiteRow]
    sentence: str


def _names(sites: list[str]) -> str:
    return sites[0] if len(sites) == 1 else ", ".join(sites[:-1]) + " and " + sites[-1]


def scope_sentence(episode: dict[str, Any] | None) -> str:
    """Plain words for one ``degradation_scope`` row (None: no degradation charted)."""
    if episode is None:
        return "no slowdown at any site in the charted weeks"
    sites = sorted(str(s) for s in episode["sites"])
    span = f"{fmt.day(episode['start_at'])} to {fmt.day(episode['end_at'])}"
    if episode["scope"] == "regional":
        return f"slower from {_names(sites)} only ({span})"
    if episode["scope"] == "provider-wide":
        where = (
            "at every site"
            if len(sites) == episode["n_sites"]
            else f"at {len(sites)} of {episode['n_sites']} sites"
        )
        return f"slower {where} ({span}; overlap test p = {episode['pvalue']:.3g})"
    p = episode["pvalue"]  # None when too little data for the overlap test to run
    chance = f"could be chance (p = {p:.2g})" if fmt.known(p) else "could not be tested"
    return (
        f"slower at {len(sites)} of {episode['n_sites']} sites ({span}), but the overlap "
        f"{chance}: regional or provider-wide is unclear"
    )


def _state(phases: pl.DataFrame, data: ReportData) -> str:
    """The site's latest non-stable stretch that reached into the week (adjacent
    non-stable phases, e.g. subtle then major, read as one), else stable."""
    if phases.height == 0:
        return "no phases"
    off = (
        phases.filter((pl.col("label") != "stable") & (pl.col("start_at") < data.now))
        .sort("start_at")
        .to_dicts()
    )
    if not off or (off[-1]["end_at"] is not None and off[-1]["end_at"] <= data.week.start):
        return "stable this week"
    first = len(off) - 1
    while first > 0 and off[first - 1]["end_at"] == off[first]["start_at"]:
        first -= 1
    since, until = off[first]["start_at"], off[-1]["end_at"]
    label = off[-1]["label"]
    if until is None:
        return f"{label} since {fmt.day(since)}"
    return f"{label} {fmt.day(since)} to {fmt.day(until)}"


def sites_view(data: ReportData) -> list[SitesView]:
    """Per provider, its sites side by side; empty unless one source (live probes, or a
    simulated history) has two sites or more this week."""
    stats = data.site_stats
    if stats.height == 0 or stats.select(pl.col("sites_in_a_source").max()).item() < 2:
        return []
    phases, scope = data.result("site_phases"), data.result("degradation_scope")
    charted_from = data.week.end - timedelta(days=CHART_DAYS)
    out = []
    for provider in data.provider_names:
        mine = stats.filter(pl.col("provider") == provider)
        rows = []
        for r in mine.iter_rows(named=True):
            own = (
                phases.filter(
                    (pl.col("provider") == provider) & (pl.col("probe_site") == r["probe_site"])
                )
                if phases.height
                else phases
            )
            rows.append(
                SiteRow(
                    site=r["probe_site"] or "(no site)",
                    probes=f"{r['n']:,}",
                    availability=fmt.pct(r["n_ok"] / r["n"] if r["n"] else None),
                    ttft_short=fmt.ms(r["ttft_short_p50"]),
                    state=_state(own, data),
                )
            )
        episodes = (
            scope.filter((pl.col("provider") == provider) & (pl.col("end_at") > charted_from))
            if scope.height
            else scope
        )
        latest = episodes.sort("start_at").row(-1, named=True) if episodes.height else None
        out.append(SitesView(provider, rows, f"{provider}: {scope_sentence(latest)}."))
    return out
