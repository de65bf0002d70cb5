"""Assemble the weekly report's context from ``ReportData``."""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl

from pipeline.report import charts, claims, fmt, grid_charts, picks, tables, verdicts
from pipeline.report.all_failing import all_failing
from pipeline.report.baseline import NoBaseline, without_baseline
from pipeline.report.context import AnalysisInfo, Chart, ReportContext, Section
from pipeline.report.data import ReportData
from pipeline.report.fixed_answers import fixed_answers
from pipeline.report.heatmap import heatmap_chart
from pipeline.report.in_short import in_short
from pipeline.report.sites import sites_view
from pipeline.report.timeline import Timeline
from pipeline.report.week_moves import week_moves
from pipeline.report.weeks import IsoWeek

__all__ = ["build_context", "timeline"]


def timeline(data: ReportData) -> Timeline:
    """The window, phases and releases every time chart of this report shares. Phases of
    a provider without a baseline are left out: the verdict does not tell them either."""
    phases = data.result("phases")
    unfounded = list(without_baseline(data))
    if phases.height and unfounded:
        phases = phases.filter(~pl.col("provider").is_in(unfounded))
    return Timeline.for_week(
        (data.week.start, data.week.end),
        now=data.now,
        first_data=data.totals["first_at"],
        phases=phases,
        releases={p: tables.releases_for(data, p) for p in data.provider_names},
    )


def _unfounded(data: ReportData) -> dict[str, NoBaseline]:
    """Providers without a baseline that the analysis nonetheless found phases for."""
    phases = data.result("phases")
    analysed = set(phases["provider"].to_list()) if phases.height else set()
    return {p: b for p, b in without_baseline(data).items() if p in analysed}


def _ttft_section(data: ReportData, window: Timeline) -> Section:
    points: list[Chart] = []
    ylim = charts.ttft_range(data.daily_ttft)
    for i, provider in enumerate(data.provider_names):
        chart = charts.ttft_chart(
            provider,
            data.daily_ttft.filter(pl.col("provider") == provider),
            key=f"ttft-{i}",
            timeline=window,
            ylim=ylim,
        )
        if chart is not None:
            points.append(chart)
    return Section(
        "latency",
        "Time to first token",
        "Daily TTFT by context class, on a log scale shared by every provider.",
        points,
        "No successful probes to plot.",
    )


def _one(key: str, title: str, chart: Chart | None, empty: str, intro: str = "") -> Section:
    return Section(key, title, intro, [chart] if chart else [], empty)


def _sections(data: ReportData, window: Timeline) -> list[Section]:
    names = data.provider_names
    return [
        _ttft_section(data, window),
        _one(
            "penalty",
            "Long-context penalty",
            charts.penalty_chart(data.penalty_daily, names, timeline=window),
            "No hour had both long- and short-context successes.",
        ),
        _one(
            "errors",
            "Errors by class",
            grid_charts.errors_chart(data.errors_daily, names, timeline=window),
            "No failed probes in the charted window.",
        ),
        _one(
            "accuracy",
            "Accuracy and sanity flags",
            grid_charts.accuracy_chart(data.accuracy_daily, names, timeline=window),
            "No scored probes in the charted window.",
        ),
        _one(
            "headroom",
            "Rate-limit headroom",
            grid_charts.headroom_chart(data.headroom_daily, names, timeline=window),
            "No provider reported rate-limit headers in the charted window.",
        ),
        _one(
            "heatmap",
            "Hour of week",
            heatmap_chart(data.hour_of_week, names),
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
    window = timeline(data)
    last_day = week.end - timedelta(days=1)
    moves = week_moves(data.class_days, week_start=week.start)
    provider_verdicts = verdicts.verdicts(data, moves)
    traffic = picks.recommendations(data)
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
        verdicts=provider_verdicts,
        recommendations=traffic,
        in_short=in_short(provider_verdicts, traffic),
        comparison=tables.comparison(data),
        sections=_sections(data, window),
        cycle=tables.cycle_rows(
            data, {v.provider: v.status for v in provider_verdicts if v.outlook}
        ),
        cycle_chart=charts.cycle_chart(
            data.result("release_forecasts"),
            data.provider_names,
            timeline=window,
            unfounded=_unfounded(data),
        ),
        cycle_findings=claims.cycle_findings(data),
        quality=tables.quality_notes(data),
        examples=tables.examples(data),
        later_week=IsoWeek.containing(data.first_after).label if data.first_after else None,
        earlier_week=IsoWeek.containing(data.last_before).label if data.last_before else None,
        fixed_answers=fixed_answers(data),
        sites=sites_view(data),
        all_failing=all_failing(data),
        week_lines=moves.summary(),
    )
