"""Assemble the weekly report's context from ``ReportData``."""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl

from pipeline.report import charts, claims, fmt, grid_charts, tables, verdicts
from pipeline.report.context import AnalysisInfo, Chart, ReportContext, Section
from pipeline.report.data import ReportData

__all__ = ["build_context"]


def _ttft_section(data: ReportData) -> Section:
    phases = data.result("phases")
    points: list[Chart] = []
    for i, provider in enumerate(data.provider_names):
        chart = charts.ttft_chart(
            provider,
            data.daily_ttft.filter(pl.col("provider") == provider),
            key=f"ttft-{i}",
            phases=phases.filter(pl.col("provider") == provider) if phases.height else phases,
            releases=tables.releases_for(data, provider),
            week=(data.week.start, data.week.end),
            now=data.now,
        )
        if chart is not None:
            points.append(chart)
    return Section(
        "latency",
        "Time to first token",
        "Daily TTFT by context class over the last year, on a log scale.",
        points,
        "No successful probes to plot.",
    )


def _cycle_chart(data: ReportData) -> Chart | None:
    releases = {p: tables.releases_for(data, p) for p in data.provider_names}
    return charts.cycle_chart(
        data.result("phases"),
        releases,
        data.result("release_forecasts"),
        data.provider_names,
        data.now,
    )


def _one(key: str, title: str, chart: Chart | None, empty: str, intro: str = "") -> Section:
    return Section(key, title, intro, [chart] if chart else [], empty)


def _sections(data: ReportData) -> list[Section]:
    names = data.provider_names
    return [
        _ttft_section(data),
        _one(
            "penalty",
            "Long-context penalty",
            charts.penalty_chart(data.penalty_daily, names),
            "No hour had both long- and short-context successes.",
        ),
        _one(
            "errors",
            "Errors by class",
            grid_charts.errors_chart(data.errors_daily, names),
            "No failed probes in the last eight weeks.",
        ),
        _one(
            "accuracy",
            "Accuracy and sanity flags",
            grid_charts.accuracy_chart(data.accuracy_daily, names),
            "No scored probes in the last eight weeks.",
        ),
        _one(
            "headroom",
            "Rate-limit headroom",
            grid_charts.headroom_chart(data.headroom_daily, names),
            "No provider reported rate-limit headers in the last eight weeks.",
        ),
        _one(
            "heatmap",
            "Hour of week",
            grid_charts.heatmap_chart(data.hour_of_week, names),
            "Not enough short-context successes in the last four weeks.",
            claims.rhythm_note(data),
        ),
    ]


def _analysis_info(data: ReportData) -> AnalysisInfo | None:
    run = data.analysis_run
    if run is None:
        return None
    since = f"{fmt.day(run['since'])} to " if run["since"] else "up to "
    window = f"{since}{fmt.day(run['until'])}"
    return AnalysisInfo(str(run["analysis_id"]), fmt.stamp(run["finished_at"]), window)


def build_context(data: ReportData, *, generated_at: datetime) -> ReportContext:
    """Everything the template needs, computed once."""
    week = data.week
    last_day = week.end - timedelta(days=1)
    return ReportContext(
        title=f"nerfwatch weekly report {week.label}",
        week=week.label,
        period=f"{fmt.day(week.start)} to {fmt.day(last_day)} (UTC)",
        generated_at=fmt.stamp(generated_at),
        partial_week=week.end > data.now,
        synthetic_rows=int(data.totals["n_synthetic"] or 0),
        total_rows=int(data.totals["n"] or 0),
        providers=data.provider_names,
        analysis=_analysis_info(data),
        verdicts=verdicts.verdicts(data),
        recommendations=verdicts.recommendations(data),
        comparison=tables.comparison(data),
        sections=_sections(data),
        cycle=tables.cycle_rows(data),
        cycle_chart=_cycle_chart(data),
        cycle_findings=claims.cycle_findings(data),
        quality=tables.quality_notes(data),
        examples=tables.examples(data),
    )
