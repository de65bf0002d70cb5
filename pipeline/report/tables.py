"""Tables of the weekly report: comparison, release cycle, data quality, examples."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

import polars as pl

from pipeline.report import fmt
from pipeline.report.charts import MIN_P95_ANSWERS
from pipeline.report.context import ComparisonRow, CycleRow, Example, QualityNote
from pipeline.report.coverage import coverage_notes
from pipeline.report.data import ReportData
from pipeline.report.grid_charts import MIN_SCORED, wilson
from pipeline.report.verdicts import STAGES, current_phase, episode_start

__all__ = ["comparison", "cycle_rows", "examples", "quality_notes", "releases_for"]


def _latency(stats: pl.DataFrame, cls: str) -> str:
    """The cell "p50 / p95", or the median and how many answers it rests on when too few
    for a p95 (``MIN_P95_ANSWERS``)."""
    part = stats.filter(pl.col("context_class") == cls)
    if part.height == 0 or part["ttft_p50"][0] is None:
        return fmt.DASH
    answers = int(part["n_ttft"][0])
    if answers < MIN_P95_ANSWERS:
        counted = f"{answers} answer" + ("" if answers == 1 else "s")
        return f"{fmt.ms(part['ttft_p50'][0])} / {fmt.DASH} ({counted}, too few for a p95)"
    return f"{fmt.ms(part['ttft_p50'][0])} / {fmt.ms(part['ttft_p95'][0])}"


def _accuracy(correct: int, scored: int) -> str:
    """The rate with its 95 % Wilson interval, or the bare count under ``MIN_SCORED``."""
    if scored == 0:
        return fmt.DASH
    if scored < MIN_SCORED:
        return f"{correct} of {scored} correct (too few to judge)"
    lo, hi = wilson([correct], [scored])  # type: ignore[arg-type]
    return f"{correct / scored * 100:.1f} % ({lo[0] * 100:.1f}–{hi[0] * 100:.1f})"


def comparison(data: ReportData) -> list[ComparisonRow]:
    """This week's figures per provider, side by side."""
    rows = []
    for provider in data.provider_names:
        stats = data.week_stats.filter(pl.col("provider") == provider)
        n = int(stats["n"].sum()) if stats.height else 0
        if n == 0:
            rows.append(ComparisonRow(provider, "0", *[fmt.DASH] * 7))
            continue
        tps = stats.filter(pl.col("tps_p50").is_not_null())["tps_p50"]
        cost = stats["cost_usd"].sum()
        rows.append(
            ComparisonRow(
                provider=provider,
                probes=f"{n:,}",
                availability=fmt.pct(int(stats["n_ok"].sum()) / n, 2),
                ttft_short=_latency(stats, "short"),
                ttft_long=_latency(stats, "long"),
                output_speed=f"{tps[0]:.0f} tok/s" if tps.len() else fmt.DASH,
                accuracy=_accuracy(int(stats["n_correct"].sum()), int(stats["n_scored"].sum())),
                flag_rate=fmt.pct(int(stats["n_flagged"].sum()) / n),
                cost_per_probe=f"${cost / n:.5f}" if cost else fmt.DASH,
            )
        )
    return rows


def releases_for(data: ReportData, provider: str) -> pl.DataFrame:
    """Releases of the provider's vendor (matched case-insensitively)."""
    vendors = data.providers.filter(pl.col("provider") == provider)["vendor"]
    vendor = vendors[0] if vendors.len() else None
    if not vendor or data.releases.height == 0:
        return data.releases.clear()
    return data.releases.filter(pl.col("vendor").str.to_lowercase() == str(vendor).lower())


def _position(data: ReportData, provider: str, untold: Mapping[str, str]) -> str:
    if provider in untold:  # as its verdict says: no baseline yet, or no probes this week
        return untold[provider][:1].lower() + untold[provider][1:]
    phase = current_phase(data.result("phases"), provider, data.now)
    if phase is None:
        return "unknown (no analysis)" if data.analysis_run is None else "unknown"
    stage = STAGES.get(phase["stage"], phase["stage"])
    began = episode_start(data.result("phases"), provider, data.now)
    here = f"{stage} for {fmt.age(phase['start_at'], data.now)}"
    if began is not None and began < phase["start_at"]:
        return f"{here} ({phase['label']} for {fmt.age(began, data.now)})"
    return here


def _window(row: dict[str, Any], today: date) -> str:
    """The forecast window as seen from ``today``: never starting in the past. A window
    that has already opened is shown from today; one that has closed is overdue. Its
    centre is "most likely" only for a conclusive forecast: from one or two lead times,
    or without clustering, it is where the window is centred, not a likelihood."""
    lo, hi, expected = row["window_lo"], row["window_hi"], row["expected_date"]
    if hi < today:
        return f"overdue: the window closed {fmt.day(hi)} with no release since the onset"
    text = f"{fmt.day(max(lo, today))} to {fmt.day(hi)}"
    if lo < today:
        text += " (window already open)"
    if expected and expected >= today:
        centre = "most likely" if row["conclusive"] else "centred on"
        text += f", {centre} {fmt.day(expected)}"
    return text


def _forecast(data: ReportData, provider: str) -> tuple[str, str]:
    """The forecast window in words, and its basis."""
    table = data.result("release_forecasts")
    mine = table.filter(pl.col("provider") == provider) if table.height else table
    if mine.height == 0:
        return ("no forecast (no ongoing degradation)" if data.analysis_run else fmt.DASH), ""
    row = mine.row(0, named=True)
    basis = str(row["basis"] or "")
    if not (row["window_lo"] and row["window_hi"]):
        return (basis or "inconclusive: not enough release history"), basis
    text = _window(row, data.now.date())
    return (text if row["conclusive"] else f"{text} (inconclusive)"), basis


def _lead_times(leads: pl.Series) -> str:
    """The provider's lead times with their mean: the list the forecast rests on."""
    if leads.len() == 0:
        return fmt.DASH
    listed = ", ".join(f"{d:.0f}" for d in leads)
    if leads.len() == 1:
        return f"{listed} days"
    return f"{listed} days (mean {float(leads.mean()):.0f})"  # type: ignore[arg-type]


def cycle_rows(data: ReportData, untold: Mapping[str, str] | None = None) -> list[CycleRow]:
    """Where each provider stands in its release cycle. ``untold``: providers whose verdict
    tells no phase, with its status ("Not enough data yet", "No probes since ..."), which
    the table says in place of the phase."""
    cycles = data.result("release_cycles")
    rows = []
    for provider in data.provider_names:
        releases = releases_for(data, provider)
        last = releases.row(-1, named=True) if releases.height else None
        leads = (
            cycles.filter((pl.col("provider") == provider) & pl.col("lead_days").is_not_null())
            if cycles.height
            else cycles
        )
        since = (data.now.date() - last["release_date"]).days if last else None
        forecast, basis = _forecast(data, provider)
        rows.append(
            CycleRow(
                provider=provider,
                last_release=f"{last['model']} ({fmt.day(last['release_date'])})"
                if last
                else fmt.DASH,
                days_since=str(since) if since is not None else fmt.DASH,
                position=_position(data, provider, untold or {}),
                lead_times=_lead_times(
                    leads.sort("release_date")["lead_days"] if leads.height else pl.Series([])
                ),
                forecast=forecast,
                forecast_basis=basis,
            )
        )
    return rows


def _skip_notes(data: ReportData) -> list[QualityNote]:
    notes = []
    for (reason,), part in data.skips.group_by("reason", maintain_order=True):
        per = ", ".join(f"{r['provider']} {r['n']}" for r in part.iter_rows(named=True))
        total = int(part["n"].sum())
        notes.append(
            QualityNote(
                "warn" if reason == "budget" else "info",
                f"{total} run(s) skipped or aborted ({reason}): {per}.",
            )
        )
    return notes


def quality_notes(data: ReportData) -> list[QualityNote]:
    """Gaps, downtime, skipped runs and missing analysis, most serious first."""
    notes: list[QualityNote] = []
    if data.week.end > data.now:
        notes.append(
            QualityNote("info", f"This week is still running: data up to {fmt.stamp(data.now)}.")
        )
    if data.week_stats.height == 0:
        notes.append(QualityNote("warn", "No probes were recorded in this week."))
    run = data.analysis_run
    if run is None:
        notes.append(
            QualityNote(
                "warn",
                "No finished analysis run: verdicts, phases and the "
                "release cycle are missing. Run: nerfwatch analyze",
            )
        )
    elif run["until"] is not None and run["until"] < data.week.start:
        notes.append(
            QualityNote(
                "warn",
                f"The newest analysis only covers data up to "
                f"{fmt.stamp(run['until'])}, before this week.",
            )
        )
    notes += coverage_notes(data) + _skip_notes(data)
    return sorted(notes, key=lambda n: n.level != "warn")


def _outcome(row: dict[str, Any]) -> str:
    if row["error_class"] not in (None, "ok"):
        return str(row["error_class"])
    if row["score_strict"] == "wrong":
        return "wrong answer"
    return "flagged: " + ", ".join(row["sanity_flags"] or [])


def examples(data: ReportData) -> list[Example]:
    """The latest failed, wrong or flagged probes of the week, with their text."""
    out = []
    for row in data.examples.iter_rows(named=True):
        failed = row["error_class"] not in (None, "ok")
        text = row["error_detail"] if failed else row["response_text"]
        out.append(
            Example(row["provider"], fmt.stamp(row["started_at"]), _outcome(row), text or "")
        )
    return out
