"""The verdict per provider: the top of the report (the picks are ``picks``).

Verdicts rest on the analysis tables (phases, warning signs, change points). Without a
finished analysis run, or before a provider has the baseline the phase analysis needs
(``MIN_BASELINE_HOURS`` hours with short-context answers), they say so and what is
missing rather than guess. How sure a verdict is comes from ``confidence.grade``; raw
p- and q-values go to a details line. Week-over-week lines carry an interval over days
and are chosen across the whole report (``week_moves``).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import polars as pl

from pipeline.report import fmt
from pipeline.report.baseline import MIN_BASELINE_HOURS, answered_hours
from pipeline.report.confidence import Evidence, grade
from pipeline.report.context import QUIET_WEEK, SignView, Verdict
from pipeline.report.data import ReportData
from pipeline.report.failing_now import failing_now
from pipeline.report.last_day import expected_gap, last_day, provisional_note
from pipeline.report.model_names import model_names_this_week
from pipeline.report.severity import SeverityBasis, describe, severity_basis
from pipeline.report.upstream_words import mix_windows, served_by
from pipeline.report.week_moves import WeekMoves, week_moves

__all__ = ["STAGES", "current_phase", "episode_start", "not_probed_lately", "verdicts"]

STAGES = {
    "stable": "Stable",
    "subtle_degradation": "Subtle degradation",
    "long_context_issues": "Long-context issues",
    "major_degradation": "Major degradation",
    "recovery": "Recovering",
}
SIGNS = {
    "long_context_slower": "Long context got slower",
    "more_busy_errors": "More 'busy' errors (429/503/529)",
    "dumber_answers": "Dumber answers",
    "fixed_answers_changed": "Same name, changed answers to fixed questions",
    "response_metadata_changed": "Response metadata changed (model name, token counts)",
    "reduced_rate_limits": "Reduced rate limits",
    "no_official_word": "No official word",
}
_EPISODES = {"degraded": "degradation", "recovering": "recovery", "stable": "stable stretch"}
_SILENT = timedelta(days=1)  # no probe for longer before the data end: no verdict of "now"
_MIN_CHANGE = 0.05  # change points smaller than this are not worth a line in the verdict
# An offline change point is listed only when its own test supports it: the search also
# puts breaks where the test then finds nothing (p 0.79 for one live hour in the demo).
# Online alarms carry no p-value; their false alarms are bounded by the monitor's ARL.
_MAX_CHANGE_P = 0.05
_METRICS = {
    "ttft_p50_ms": "TTFT p50",
    "ttft_p95_ms": "TTFT p95",
    "total_p50_ms": "total time p50",
    "output_tps_p50": "output speed",
    "error_rate": "busy-error rate",
    "timeout_rate": "timeout rate",
    "wrong_rate": "wrong-answer rate",
    "sanity_flag_rate": "sanity-flag rate",
    "accuracy": "accuracy",
}


def current_phase(phases: pl.DataFrame, provider: str, at: datetime) -> dict[str, Any] | None:
    """The phase of ``provider`` ongoing at ``at`` (or the latest one before it).

    A report of a past week may rest on a later analysis run: phases that began after
    the week say nothing about it.
    """
    if phases.height == 0:
        return None
    mine = phases.filter((pl.col("provider") == provider) & (pl.col("start_at") < at))
    if mine.height == 0:
        return None
    mine = mine.sort("start_at")
    ongoing = mine.filter(pl.col("end_at").is_null() | (pl.col("end_at") > at))
    return (ongoing if ongoing.height else mine).row(-1, named=True)


def episode_start(phases: pl.DataFrame, provider: str, at: datetime) -> datetime | None:
    """Where the run of same-label phases ongoing at ``at`` began: a degradation that
    moved from one stage to another (long-context issues, then major) is one episode to
    a reader."""
    phase = current_phase(phases, provider, at)
    if phase is None:
        return None
    mine = phases.filter(
        (pl.col("provider") == provider) & (pl.col("start_at") <= phase["start_at"])
    ).sort("start_at", descending=True)
    start: datetime = phase["start_at"]
    for row in mine.iter_rows(named=True):
        if row["label"] != phase["label"] or (row["end_at"] is not None and row["end_at"] < start):
            break
        start = row["start_at"]
    return start


def _tone(phase: dict[str, Any]) -> str:
    if phase["label"] == "stable":
        return "ok"
    return "bad" if phase["stage"] == "major_degradation" else "warn"


_METADATA = "response_metadata_changed"  # pipeline.analysis.metadata_sign.SIGN
_SIGN_UNITS = {
    "long_context_slower": "long/short TTFT ratio",
    "more_busy_errors": "busy-error rate",
    "reduced_rate_limits": "advertised limit",
    "response_metadata_changed": "token count",
}


def _in_100(share: float) -> str:
    return f"{share * 100:+.0f}"


def _answers_effect(row: dict[str, Any]) -> str:
    """A drift baseline's sign has a TV over the expected with its range; the fixed_prompt
    G-test alone has only the TV between the two windows. TV (total variation) is the share
    of answers that would have to change for two distributions to match, so it is told as
    answers in 100 (the "Same model name" section's reading), with TV after it."""
    effect, lo, hi = row["effect"], row["effect_lo"], row["effect_hi"]
    if not fmt.known(effect):
        return "the answers to fixed questions changed"
    if fmt.known(lo) and fmt.known(hi):
        more = "more" if effect >= 0 else "fewer"
        return (
            f"{abs(effect) * 100:.0f} in 100 {more} first answer tokens to fixed questions "
            "differ from the accepted baseline than sampling alone explains (95\u00a0% "
            f"range {_in_100(lo)} to {_in_100(hi)} in 100; TV {effect:+.2f} over the expected)"
        )
    return (
        f"{effect * 100:.0f} in 100 answers to fixed questions would have to change to "
        f"match the earlier window (TV {effect:.2f})"
    )


def _sign_effect(row: dict[str, Any]) -> str:
    """The effect of a firing sign in its own unit, with its 95 % interval."""
    sign = row["sign"]
    if sign == "no_official_word":
        return "no incident recorded for the vendor in the window"
    if sign == "fixed_answers_changed":  # a distance, not a ratio or a share
        return _answers_effect(row)
    show = fmt.points if sign == "dumber_answers" else fmt.rel
    unit = "accuracy" if sign == "dumber_answers" else _SIGN_UNITS.get(sign, "")
    text = f"{show(row['effect'])} {unit}".strip()
    if fmt.known(row["effect_lo"]) and fmt.known(row["effect_hi"]):
        text += f" (95\u00a0% CI {show(row['effect_lo'])} to {show(row['effect_hi'])})"
    moved = served_by(row.get("detail") or "", row) if sign == _METADATA else None
    if moved is not None:  # the upstreams a router names say more than a token count
        return f"{moved}; {text}" if fmt.known(row["effect"]) else moved
    return text


def _firing(data: ReportData, provider: str) -> pl.DataFrame:
    """Signs that fire in a window reaching into the report's period: a later analysis
    run's recent window says nothing about a past week."""
    table = data.result("warning_signs")
    if table.height == 0:
        return table
    in_time = pl.col("window_start").is_null() | (pl.col("window_start") < data.now)
    return table.filter((pl.col("provider") == provider) & pl.col("fires") & in_time).sort("sign")


def _signs(data: ReportData, provider: str) -> list[SignView]:
    views = []
    for row in _firing(data, provider).iter_rows(named=True):
        persistent = "persistent" if row.get("persistent") else "first window"
        label = SIGNS.get(row["sign"], row["sign"])
        detail = row.get("detail") or ""
        if row["sign"] == _METADATA:
            detail = mix_windows(detail, row)
        views.append(SignView(label, _sign_effect(row), persistent, detail))
    return views


def _sign_qvalues(data: ReportData, provider: str) -> str:
    """The firing signs' q-values, for the details line (not the verdict's sentence)."""
    parts = [
        f"{SIGNS.get(row['sign'], row['sign'])}: q = {row['qvalue']:.2g}"
        for row in _firing(data, provider).iter_rows(named=True)
        if fmt.known(row["qvalue"])
    ]
    return "; ".join(parts)


def _analysis_changes(data: ReportData, provider: str) -> list[str]:
    notes = []
    # This week only: an analysis run after the week also dates changes that came later.
    start, end = data.week.start, data.now
    phases = data.result("phases")
    if phases.height:
        mine = phases.filter(pl.col("provider") == provider).sort("start_at")
        # The first phase begins with the first probe: that is no change.
        new = mine.slice(1).filter(pl.col("start_at").is_between(start, end, closed="left"))
        for row in new.iter_rows(named=True):
            stage = STAGES.get(row["stage"], row["stage"])
            notes.append(f"Entered phase '{stage}' on {fmt.day(row['start_at'])}")
    points = data.result("change_points")
    if points.height:
        mine = points.filter(
            (pl.col("provider") == provider)
            & pl.col("at").is_between(start, end, closed="left")
            & (pl.col("effect").abs() >= _MIN_CHANGE)
            & ((pl.col("detector") == "online") | (pl.col("pvalue") < _MAX_CHANGE_P))
        )
        biggest = mine.sort(pl.col("effect").abs(), descending=True).head(3)
        run = data.analysis_run or {}
        last = last_day(_hours(data, provider), run.get("until"))
        for row in biggest.sort("at").iter_rows(named=True):
            metric = _METRICS.get(row["metric"], row["metric"])
            where = f"{row['context_class']}-context " if row["context_class"] else ""
            note = provisional_note(row, points, last)
            notes.append(
                f"{where.capitalize()}{metric} {_shift(row)} on {fmt.day(row['at'])} "
                f"(change point{note})"
            )
    return notes


def _shift(row: dict[str, Any]) -> str:
    """A change point's move in words. A rate's ratio from a (near) zero baseline is an
    artefact of the zero-count correction (+52709 %), so rates show their two levels."""
    before, after = row["level_before"], row["level_after"]
    if str(row["metric"]).endswith("_rate") and fmt.known(before) and fmt.known(after):
        return f"went from {fmt.pct(before)} to {fmt.pct(after)}"
    return f"shifted {fmt.rel(row['effect'])}"


def _hours(data: ReportData, provider: str) -> pl.DataFrame:
    return data.history_hours.filter(pl.col("provider") == provider)


def _evidence(
    data: ReportData, provider: str, phase: dict[str, Any], basis: SeverityBasis
) -> Evidence:
    """Probes, interval, test and regime-model agreement behind ``phase``. An outage
    whose answers are too few for a latency severity is sized by its failures instead."""
    end = phase["end_at"] or data.now
    inside = _hours(data, provider).filter(
        (pl.col("hour") >= phase["start_at"]) & (pl.col("hour") < end)
    )
    degraded = phase["label"] != "stable"
    unsized = degraded and not basis.sizeable  # its interval is not printed: not graded
    lo, hi = phase["severity_lo"], phase["severity_hi"]
    interval = (lo, hi) if fmt.known(lo) and fmt.known(hi) and not unsized else None
    pvalue = 1.0 - phase["confidence"] if degraded and fmt.known(phase["confidence"]) else None
    probs = data.result("degraded_probability")
    agreement = None
    if probs.height:
        days = probs.filter(
            (pl.col("provider") == provider)
            & (pl.col("day") >= phase["start_at"].date())
            & (pl.col("day") <= end.date())
        )["p_degraded"].drop_nulls()
        # Two regimes, degraded or not: a recovery is neither, so the model cannot
        # confirm or contradict it.
        if days.len() and phase["label"] in ("stable", "degraded"):
            mean = float(days.mean())  # type: ignore[arg-type]
            agreement = mean if degraded else 1.0 - mean
    return Evidence(
        degraded,
        int(inside["n"].sum()),
        inside.height,
        interval,
        pvalue,
        agreement,
        sized_by_failures=unsized and "error_rate" in (phase["signals"] or []),
    )


def _readiness(data: ReportData, provider: str) -> str:
    """What the data cannot tell yet and how much more it needs; "" when enough."""
    hours = _hours(data, provider)
    covered = answered_hours(hours)
    if covered >= MIN_BASELINE_HOURS:
        return ""
    probes = int(hours["n"].sum()) if hours.height else 0
    if probes and not covered:  # more probes that fail would not help: answers would
        return (
            f"None of its {fmt.count(probes, 'probe')} so far has answered a short-context "
            f"probe. Phases compare against a baseline of at least {MIN_BASELINE_HOURS} "
            "hours with short-context answers, so until it answers there is nothing to "
            f"judge {provider} against."
        )
    missing = MIN_BASELINE_HOURS - covered
    return (
        f"So far {fmt.count(probes, 'probe')}, with a short-context answer in "
        f"{fmt.count(covered, 'hour')}. Phases compare against a baseline of at least "
        f"{MIN_BASELINE_HOURS} hours with short-context answers, so it cannot tell yet "
        f"whether {provider} is stable or degraded: it needs at least {missing} more "
        f"short-context probe(s), one in each of {missing} more hours. This week's "
        "figures are descriptive until then."
    )


def _since(data: ReportData, phase: dict[str, Any]) -> str:
    since = phase["start_at"]
    text = f"since {fmt.day(since)} ({fmt.age(since, data.now)})"
    began = episode_start(data.result("phases"), str(phase["provider"]), data.now)
    if began is not None and began < since:  # one episode to a reader: say where it began
        episode = _EPISODES.get(str(phase["label"]), f"{phase['label']} stretch")
        text += f", the latest stage of a {episode} that began {fmt.day(began)} "
        text += f"({fmt.age(began, data.now)} ago)"
    return text


def not_probed_lately(data: ReportData, provider: str) -> bool:
    """Not probed since before this report's week, or its probes stopped during it (a
    provider removed or renamed on Wednesday) for more than ``_SILENT`` and two of its
    usual spacings before the data end: its phase describes then, not now."""
    last = data.last_probe(provider)
    if last is None:
        return False
    hours = _hours(data, provider)["hour"]
    spacing = timedelta(hours=2 * expected_gap(hours)) if hours.len() else _SILENT
    return last < data.week.start or data.now - last > max(_SILENT, spacing)


def _stale(data: ReportData, phase: dict[str, Any], last: datetime) -> str:
    """A provider not probed this week, or not since a day of it: its phase describes
    then, not now."""
    stage = STAGES.get(phase["stage"], str(phase["stage"])).lower()
    when = "for this week" if last < data.week.start else "for now"
    return (
        f"Last probed {fmt.stamp(last)}, {fmt.age(last, data.now)} before this report's "
        f"data ends: {stage} then (since {fmt.day(phase['start_at'])}). With no probes "
        f"since, nothing says how it is now, so there is no verdict {when}."
    )


def _verdict(data: ReportData, provider: str, model: str, moves: WeekMoves) -> Verdict:
    """The card, with an outage under way at the end of the data said first and coloured
    as bad whatever the phases say: they need days to see it."""
    verdict = replace(
        _phase_verdict(data, provider, model, moves.lines.get(provider, [])),
        unseen="; ".join(moves.notes.get(provider, [])),
    )
    failing = failing_now(_hours(data, provider))
    if failing is None or not_probed_lately(data, provider):  # an old outage is no "now"
        return verdict
    # the phase's stage is still told, as what the phases (days long) say of the stretch
    told = verdict.tone != "unknown"  # "Not enough data yet" is no phase to name
    since = f"{verdict.status} phase {verdict.since}".strip() if told else verdict.since
    return replace(verdict, tone="bad", status="Failing now", since=since, failing=failing.words())


def _phase_verdict(data: ReportData, provider: str, model: str, moved: list[str]) -> Verdict:
    outlook = _readiness(data, provider)
    # Without a baseline the analysis's phases and change points are noise, not news.
    changes = ([] if outlook else _analysis_changes(data, provider)) + moved
    changes = model_names_this_week(data, provider) + changes
    if not changes:
        probed = data.week_stats.filter(pl.col("provider") == provider).height > 0
        changes = [QUIET_WEEK if probed else "No probes this week."]
    signs, qvalues = _signs(data, provider), _sign_qvalues(data, provider)
    phase = current_phase(data.result("phases"), provider, data.now)
    if outlook or data.analysis_run is None or phase is None:
        status = (
            "Not enough data yet"
            if outlook
            else "Not analysed yet (run: nerfwatch analyze)"
            if data.analysis_run is None
            else "No phase found: too little data for this provider"
        )
        return Verdict(
            provider, model, "unknown", status, "", "", "", signs, changes, outlook, qvalues
        )
    last = data.last_probe(provider)
    if last is not None and not_probed_lately(data, provider):
        return Verdict(
            provider, model, "unknown", f"No probes since {fmt.day(last)}", "", "", "",
            signs, changes, _stale(data, phase, last), qvalues,
        )  # fmt: skip
    basis = severity_basis(_hours(data, provider), phase, phase["end_at"] or data.now)
    judged = grade(_evidence(data, provider, phase, basis))
    details = "; ".join(x for x in (judged.details, qvalues) if x)
    tone, status = _tone(phase), STAGES.get(phase["stage"], str(phase["stage"]))
    symptoms = [s for s in signs if s.label != SIGNS["no_official_word"]]
    if tone == "ok" and symptoms:  # a green "Stable" card above "Dumber answers" reads false
        tone = "warn"
        status = f"{status} phase, but {_count(len(symptoms), 'warning sign')} firing"
    return Verdict(
        provider,
        model,
        tone,
        status,
        _since(data, phase),
        describe(phase, basis),
        judged.words,
        signs,
        changes,
        "",
        details,
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def verdicts(data: ReportData, moves: WeekMoves | None = None) -> list[Verdict]:
    """One verdict per provider seen in the history window, worst first. Week-over-week
    lines are chosen across the whole report (``week_moves``), not card by card."""
    if moves is None:
        moves = week_moves(data.class_days, week_start=data.week.start)
    order = {"bad": 0, "warn": 1, "unknown": 2, "ok": 3}
    found = [
        _verdict(data, str(row["provider"]), str(row["model"]), moves)
        for row in data.providers.iter_rows(named=True)
    ]
    return sorted(found, key=lambda v: (order[v.tone], v.provider))
