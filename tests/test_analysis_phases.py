"""Phases, warning signs, release cycles and vendor incidents on constructed data."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import numpy as np
import polars as pl
import pytest

from pipeline.analysis import release_cycles as rc
from pipeline.analysis.degraded_days import daily_probability
from pipeline.analysis.incidents import vendor_incidents
from pipeline.analysis.onset import ramp_fit
from pipeline.analysis.phases import (
    ProviderSeries,
    Segment,
    find_phases,
    refine_onsets,
    severity_signal,
)
from pipeline.analysis.series import long_context_penalty
from pipeline.analysis.warning_signs import warning_signs

DAYS = 120
START = np.datetime64("2026-01-05T00", "h")


def _series(
    rng: np.random.Generator,
    short_mult: float = 1.0,
    long_mult: float = 1.0,
    err_mult: float = 1.0,
    acc_drop: float = 0.0,
    window: tuple[int, int] = (50, 80),
) -> ProviderSeries:
    n = DAYS * 24
    t = np.arange(n)
    inside = (t >= window[0] * 24) & (t < window[1] * 24)
    short = np.log(400) + rng.normal(0, 0.08, n) + inside * np.log(short_mult)
    long = short + np.log(4) + rng.normal(0, 0.08, n) + inside * np.log(long_mult / short_mult)
    per_hour = np.full(n, 24)
    errors = rng.binomial(per_hour, np.where(inside, 0.01 * err_mult, 0.01))
    scored = per_hour - errors
    correct = rng.binomial(scored, np.where(inside, 0.95 - acc_drop, 0.95))
    return ProviderSeries(
        hours=START + t, short=short, long=long, n=per_hour, n_errors=errors,
        n_scored=scored, n_correct=correct, n_flagged=np.zeros(n, dtype=np.int64),
    )  # fmt: skip


def _labels(phases: list) -> list[tuple[str, str]]:
    return [(p.label, p.stage) for p in phases]


def test_latency_step_gives_subtle_degradation_with_severity_ci() -> None:
    s = _series(np.random.default_rng(1), short_mult=1.3, long_mult=1.3)
    phases, _ = find_phases(s)
    assert _labels(phases) == [
        ("stable", "stable"),
        ("degraded", "subtle_degradation"),
        ("stable", "stable"),
    ]
    deg = phases[1]
    assert abs(deg.start - 50 * 24) <= 24 and abs(deg.end - 80 * 24) <= 24
    assert deg.severity_lo < 0.3 < deg.severity_hi
    assert "ttft_short" in deg.signals
    # a degradation's confidence is 1 - its smallest p; "no change found" has none (was 1.0)
    assert 0.99 <= deg.confidence <= 1.0
    assert all(np.isnan(p.confidence) for p in phases if p.label == "stable")


def test_long_context_only_is_long_context_issues() -> None:
    s = _series(np.random.default_rng(2), short_mult=1.0, long_mult=1.8)
    phases, _ = find_phases(s)
    assert ("degraded", "long_context_issues") in _labels(phases)
    deg = next(p for p in phases if p.label == "degraded")
    assert "long_context_penalty" in deg.signals and "ttft_short" not in deg.signals


def test_errors_and_accuracy_make_it_major() -> None:
    s = _series(np.random.default_rng(3), short_mult=1.5, long_mult=1.5, err_mult=5, acc_drop=0.1)
    phases, _ = find_phases(s)
    deg = next(p for p in phases if p.label == "degraded")
    assert deg.stage == "major_degradation"
    assert {"error_rate", "accuracy"} <= set(deg.signals)


def test_stable_series_has_one_stable_phase() -> None:
    s = _series(np.random.default_rng(4))
    phases, _ = find_phases(s)
    assert _labels(phases) == [("stable", "stable")]
    days, p, _method = daily_probability(s, phases)
    assert days.size == DAYS and float(np.max(p)) < 0.5


def test_recovery_between_major_and_stable() -> None:
    rng = np.random.default_rng(5)
    s = _series(rng, short_mult=1.6, long_mult=1.6, window=(40, 70))
    short = s.short.copy()
    t = np.arange(short.size)
    short[(t >= 70 * 24) & (t < 85 * 24)] += np.log(1.2)
    s2 = ProviderSeries(
        s.hours, short, s.long, s.n, s.n_errors, s.n_scored, s.n_correct, s.n_flagged
    )
    labels = _labels(find_phases(s2)[0])
    assert ("recovering", "recovery") in labels
    assert labels[-1] == ("stable", "stable")


def test_markov_probability_marks_degraded_days() -> None:
    s = _series(np.random.default_rng(6), short_mult=1.5, long_mult=1.5)
    phases, _ = find_phases(s)
    _days, p, method = daily_probability(s, phases)
    assert method in ("markov", "phases")
    assert np.mean(p[55:75]) > 0.8 and np.mean(p[:45]) < 0.2


def test_one_regime_holding_every_day_is_not_degraded_all_along() -> None:
    """72 stable days, then 19 slower ones: the two-regime fit settled on one absorbing
    regime for all 91 days and called every stable day degraded (p = 1.0)."""
    t = np.arange(91 * 24)
    short = np.log(400) + np.random.default_rng(0).normal(0, 0.3, t.size)
    s = ProviderSeries(hours=START + t, short=short + (t >= 72 * 24) * np.log(1.18))
    phases, _ = find_phases(s)
    assert _labels(phases) == [("stable", "stable"), ("degraded", "subtle_degradation")]
    _days, p, _method = daily_probability(s, phases)
    assert float(np.max(p[:70])) < 0.5 and float(np.min(p[73:])) > 0.5, p


def _hourly(
    busy_recent: float, limit_recent: float = 250.0, headroom_recent: float = 0.6
) -> pl.DataFrame:
    rng = np.random.default_rng(7)
    hours = [datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=h) for h in range(24 * 40)]
    recent = np.arange(len(hours)) >= 24 * 37
    n = np.full(len(hours), 24)
    busy = rng.binomial(n, np.where(recent, busy_recent, 0.01))
    frame = pl.DataFrame({
        "provider": "p", "model": "m", "context_class": "short", "hour": hours, "vendor": "V",
        "n": n, "n_busy": busy, "n_scored": n - busy, "n_correct": n - busy,
        "n_flagged": np.zeros(len(hours), dtype=np.int64),
        "requests_limit": np.where(recent, limit_recent, 500.0), "tokens_limit": None,
        "requests_headroom": np.clip(
            np.where(recent, headroom_recent, 0.6) + rng.normal(0, 0.05, len(hours)), 0, 1
        ),
    })  # fmt: skip
    return frame.with_columns(pl.col("hour").cast(pl.Datetime("us", "UTC")))


def _signs(
    hourly: pl.DataFrame, incidents: pl.DataFrame, penalty: pl.DataFrame | None = None
) -> dict[str, object]:
    if penalty is None:
        penalty = pl.DataFrame(
            schema={"provider": pl.Utf8, "model": pl.Utf8, "hour": pl.Datetime("us", "UTC"),
                    "penalty": pl.Float64}
        )  # fmt: skip
    res = warning_signs(hourly, penalty, incidents, {("p", "m"): "V"})
    return {r.sign: r for r in res}


def test_warning_signs_fire_on_errors_and_limits_and_no_official_word() -> None:
    empty = pl.DataFrame(schema={"vendor": pl.Utf8, "start_date": pl.Date, "end_date": pl.Date})
    signs = _signs(_hourly(0.05), empty)
    assert signs["more_busy_errors"].fires and signs["more_busy_errors"].qvalue < 0.05
    assert signs["reduced_rate_limits"].fires
    assert signs["reduced_rate_limits"].effect == pytest.approx(-0.5, abs=0.01)
    assert not signs["dumber_answers"].fires
    assert signs["no_official_word"].fires
    incidents = pl.DataFrame(
        {"vendor": ["V"], "start_date": [date(2026, 2, 8)], "end_date": [None]},
        schema={"vendor": pl.Utf8, "start_date": pl.Date, "end_date": pl.Date},
    )
    assert not _signs(_hourly(0.05), incidents)["no_official_word"].fires


def test_shrinking_headroom_at_the_same_limit_is_a_reduced_rate_limit() -> None:
    empty = pl.DataFrame(schema={"vendor": pl.Utf8, "start_date": pl.Date, "end_date": pl.Date})
    sign = _signs(_hourly(0.01, limit_recent=500.0, headroom_recent=0.3), empty)
    rl = sign["reduced_rate_limits"]
    assert rl.fires and rl.effect == pytest.approx(-0.5, abs=0.05)
    assert "headroom" in rl.detail and "Bonferroni" in rl.test


def test_warning_signs_quiet_when_nothing_changes() -> None:
    empty = pl.DataFrame(schema={"vendor": pl.Utf8, "start_date": pl.Date, "end_date": pl.Date})
    signs = _signs(_hourly(0.01, limit_recent=500.0), empty)
    assert not any(r.fires for r in signs.values())


def test_a_ttft_or_limit_recorded_as_zero_does_not_silence_a_sign() -> None:
    """A ratio or limit of 0 (or an infinite ratio) has no logarithm: such hours are left
    out, and the signs are still tested on the rest (they were NaN, so they never fired)."""
    empty = pl.DataFrame(schema={"vendor": pl.Utf8, "start_date": pl.Date, "end_date": pl.Date})
    hourly = _hourly(0.01, limit_recent=250.0)
    hours = hourly["hour"]
    recent = np.arange(len(hours)) >= 24 * 37
    ratio = (
        4.0
        * np.where(recent, 1.6, 1.0)
        * np.exp(np.random.default_rng(3).normal(0, 0.05, len(hours)))
    )
    ratio[[100, 200]] = [0.0, np.inf]  # a long and a short TTFT recorded as 0 ms
    penalty = pl.DataFrame({"provider": "p", "model": "m", "hour": hours, "penalty": ratio})
    limits = hourly["requests_limit"].to_numpy().copy()
    limits[300] = 0.0
    hourly = hourly.with_columns(pl.Series("requests_limit", limits))
    signs = _signs(hourly, empty, penalty)
    slower = signs["long_context_slower"]
    assert np.isfinite(slower.pvalue) and slower.fires
    assert slower.effect == pytest.approx(0.6, abs=0.05)
    limited = signs["reduced_rate_limits"]
    assert np.isfinite(limited.pvalue) and limited.fires


def test_long_context_penalty_is_null_where_a_ttft_is_not_positive() -> None:
    hour = datetime(2026, 1, 1, tzinfo=UTC)
    grid = pl.DataFrame({
        "provider": "p", "model": "m", "hour": [hour, hour, hour + timedelta(hours=1),
        hour + timedelta(hours=1)], "context_class": ["short", "long", "short", "long"],
        "ttft_p50_ms": [0.0, 900.0, 300.0, 1200.0],
    })  # fmt: skip
    penalty = long_context_penalty(grid)["penalty"].to_list()
    assert penalty == [None, 4.0]


def test_onsets_and_lead_times() -> None:
    t = [datetime(2026, m, 1, tzinfo=UTC) for m in (1, 3, 5, 6)]
    phases = [("stable", t[0]), ("degraded", t[1]), ("recovering", t[2]), ("stable", t[3])]
    onsets = rc.onsets(phases)
    assert onsets == [t[1]]
    leads = rc.lead_times(onsets, [date(2026, 4, 30), date(2026, 12, 1)])
    assert leads[0][2] == pytest.approx(60.0) and leads[1][1] is None


def test_clustering_test_detects_onsets_before_releases() -> None:
    span = (datetime(2024, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC))
    releases = [date(2024, 4, 1) + timedelta(days=180 * k) for k in range(4)]
    onsets = [datetime(r.year, r.month, r.day, tzinfo=UTC) - timedelta(days=60) for r in releases]
    share, p, n = rc.clustering_test(onsets, releases, span)
    assert share == 1.0 and n == 4 and p < 0.1
    _, p_one, _ = rc.clustering_test(onsets[:1], releases[:1], span)
    assert p_one > 0.05


def test_forecast_is_inconclusive_with_weak_evidence() -> None:
    onset = datetime(2026, 3, 1, tzinfo=UTC)
    weak = rc.forecast_release(onset, [60.0], float("nan"))
    assert not weak.conclusive and "inconclusive" in weak.basis
    strong = rc.forecast_release(onset, [58.0, 60.0, 63.0], 0.01)
    assert strong.conclusive and strong.lo is not None and strong.hi is not None
    assert strong.lo <= date(2026, 4, 30) <= strong.hi


def test_event_study_relative_to_pre_period() -> None:
    days = np.arange(np.datetime64("2026-01-01"), np.datetime64("2026-09-01"))
    values = np.full(days.size, 400.0)
    release = date(2026, 6, 1)
    offsets = (days - np.datetime64(release)).astype(int)
    values[(offsets >= -60) & (offsets < 0)] = 520.0
    rows = {o: r for o, _, r in rc.event_study(days, values, release)}
    assert rows[-100] == pytest.approx(1.0) and rows[-30] == pytest.approx(1.3)
    assert min(rows) == -120 and max(rows) == 60


def test_synchronization_and_vendor_incidents() -> None:
    a = np.zeros(100, dtype=bool)
    a[30:50] = True
    jac, p = rc.synchronization_test(a, a.copy())
    assert jac == 1.0 and p < 0.05
    d0 = date(2026, 2, 1)
    days = {d0 + timedelta(days=k) for k in range(5)}
    inc = vendor_incidents({"V": {"x": days, "y": {d0 + timedelta(days=3)}}, "W": {"z": days}})
    assert len(inc) == 1 and inc[0].vendor == "V"
    assert inc[0].start == d0 + timedelta(days=3) and inc[0].members == ["x", "y"]


def test_gradual_onset_is_dated_from_its_start() -> None:
    rng = np.random.default_rng(11)
    s = _series(rng)
    t = np.arange(s.short.size)
    ramp = np.clip((t - 50 * 24) / (7 * 24), 0, 1) * np.log(1.3) * (t < 90 * 24)
    s2 = ProviderSeries(
        s.hours, s.short + ramp, s.long + ramp, s.n, s.n_errors, s.n_scored, s.n_correct,
        s.n_flagged,
    )  # fmt: skip
    deg = next(p for p in find_phases(s2)[0] if p.label == "degraded")
    assert abs(deg.start - 50 * 24) <= 24


def test_ramp_onset_joint_fit() -> None:
    rng = np.random.default_rng(12)
    ramp = np.r_[np.zeros(500), np.linspace(0, 1, 169)[1:], np.ones(300)]
    a = ramp + rng.normal(0, 0.3, ramp.size)
    b = 2 * ramp + rng.normal(0, 0.3, ramp.size)
    assert abs(ramp_fit([a, b], 0, 600, ramp.size)[0] - 500) <= 12
    step = np.r_[np.zeros(500), np.ones(300)] + rng.normal(0, 0.3, 800)
    assert abs(ramp_fit([step], 0, 500, 800)[0] - 500) <= 12


def test_ramp_fit_interval_covers_the_start_and_a_step_stays_a_step() -> None:
    rng = np.random.default_rng(5)
    ramp = np.r_[np.zeros(600), np.linspace(0, 1, 121)[1:], np.ones(400)]
    x = ramp + rng.normal(0, 0.3, ramp.size)
    onset, lo, hi = ramp_fit([x], 0, 660, ramp.size)
    assert lo <= 600 <= hi and abs(onset - 600) <= 24 and hi - lo <= 72
    # an abrupt step with a stray excursion a week before: no slow start is read into it
    # (the excursion raises the long-run noise variance, so the interval is wider than on
    # clean noise)
    step = np.r_[np.zeros(600), np.ones(400)] + rng.normal(0, 0.3, 1000)
    clean = step.copy()
    step[430:450] += 0.6
    onset, lo, hi = ramp_fit([step], 0, 600, 1000)
    assert abs(onset - 600) <= 2 and lo <= 600 <= hi and hi - lo <= 24
    onset, lo, hi = ramp_fit([clean], 0, 600, 1000)
    assert abs(onset - 600) <= 2 and lo <= 600 <= hi and hi - lo <= 12


def test_onset_dating_sees_through_a_stable_piece_cut_out_of_the_ramp() -> None:
    """Segmentation often cuts the first, not yet significant, stretch of a ramp off as a
    short "stable" segment: the onset is dated from the whole stable run before it."""
    rng = np.random.default_rng(8)
    n = 1500
    t = np.arange(n)
    level = np.clip((t - 700) / 168, 0, 1) * np.log(1.3)
    short = np.log(400) + level + rng.normal(0, 0.08, n)
    s = ProviderSeries(hours=START + t, short=short)
    segs = [
        Segment(0, 720),
        Segment(720, 760),
        Segment(760, n, {"ttft_short": 0.2}, {}, "degraded", "subtle_degradation"),
    ]
    out = refine_onsets(segs, s)
    assert [g.label for g in out] == ["stable", "degraded"]
    deg = out[1]
    assert abs(deg.start - 700) <= 24 and out[0].end == deg.start
    assert deg.onset_lo is not None and deg.onset_hi is not None
    assert deg.onset_lo <= 700 <= deg.onset_hi


def test_planted_ramp_dated_from_its_start() -> None:
    """Gradual 7-day ramp of +20 % (short) / +40 % (long): onset within a day of its start."""
    rng = np.random.default_rng(21)
    s = _series(rng)
    t = np.arange(s.short.size)
    frac = np.clip((t - 40 * 24) / (7 * 24), 0, 1) * (t < 90 * 24)
    s2 = ProviderSeries(
        s.hours, s.short + frac * np.log(1.2), s.long + frac * np.log(1.4), s.n, s.n_errors,
        s.n_scored, s.n_correct, s.n_flagged,
    )  # fmt: skip
    deg = next(p for p in find_phases(s2)[0] if p.label == "degraded")
    assert abs(deg.start - 40 * 24) <= 24
    assert deg.start_lo is not None and deg.start_hi is not None
    assert deg.start_lo <= deg.start <= deg.start_hi


def test_a_degradation_that_worsens_within_its_stage_is_two_phases() -> None:
    """Major degradation at +15 % TTFT, then at +90 %: one phase would report a median over
    both levels; two phases report each level with an interval around it."""
    rng = np.random.default_rng(11)
    s = _series(rng, short_mult=1.15, long_mult=1.15, err_mult=5, acc_drop=0.1, window=(40, 100))
    short, long = s.short.copy(), s.long.copy()
    worse = np.arange(short.size) >= 70 * 24
    worse &= np.arange(short.size) < 100 * 24
    short[worse] += np.log(1.9 / 1.15)
    long[worse] += np.log(1.9 / 1.15)
    s2 = ProviderSeries(s.hours, short, long, s.n, s.n_errors, s.n_scored, s.n_correct, s.n_flagged)
    phases, _ = find_phases(s2)
    major = [p for p in phases if p.stage == "major_degradation"]
    assert len(major) == 2
    first, second = major
    assert abs(first.start - 40 * 24) <= 24 and abs(second.start - 70 * 24) <= 24
    assert first.severity_lo < 0.15 < first.severity_hi
    assert second.severity_lo < 0.9 < second.severity_hi


def test_one_level_stays_one_phase_across_a_break_of_another_signal() -> None:
    """The error rate jumps again mid-phase (a confirmed break) while TTFT holds its level:
    still one major phase."""
    rng = np.random.default_rng(12)
    s = _series(rng, short_mult=1.3, long_mult=1.3, err_mult=4, acc_drop=0.1, window=(40, 100))
    errors = s.n_errors.copy()
    t = np.arange(errors.size)
    later = (t >= 70 * 24) & (t < 100 * 24)
    errors[later] = rng.binomial(24, 0.15, later.sum())
    s2 = ProviderSeries(s.hours, s.short, s.long, s.n, errors, s.n_scored, s.n_correct, s.n_flagged)
    phases, segments = find_phases(s2)
    assert sum(g.stage == "major_degradation" for g in segments) >= 2  # the break is there
    assert [p.stage for p in phases].count("major_degradation") == 1


def test_a_short_step_on_the_way_up_joins_the_phase_it_leads_into() -> None:
    """+15 %, then 36 h at +50 %, then +90 %: the 36 h piece is the way into the +90 %
    level, so the worse phase is dated from its start and there are two phases, not three."""
    rng = np.random.default_rng(13)
    s = _series(rng, short_mult=1.15, long_mult=1.15, err_mult=5, acc_drop=0.1, window=(40, 100))
    t = np.arange(s.short.size)
    lift = np.where((t >= 70 * 24) & (t < 70 * 24 + 36), np.log(1.5 / 1.15), 0.0)
    lift += np.where((t >= 70 * 24 + 36) & (t < 100 * 24), np.log(1.9 / 1.15), 0.0)
    s2 = ProviderSeries(
        s.hours, s.short + lift, s.long + lift, s.n, s.n_errors, s.n_scored, s.n_correct,
        s.n_flagged,
    )  # fmt: skip
    phases, segments = find_phases(s2)
    starts = [g.start for g in segments if g.stage == "major_degradation"]
    assert any(abs(b - (70 * 24 + 36)) <= 6 for b in starts)  # the piece is found
    major = [p for p in phases if p.stage == "major_degradation"]
    assert len(major) == 2
    assert abs(major[1].start - 70 * 24) <= 6
    assert major[1].severity_lo < 0.9 < major[1].severity_hi


def test_severity_of_a_slowdown_seen_only_in_long_context_is_measured_there() -> None:
    """Long-context TTFT +8 %, short unchanged: too small a penalty for long-context issues,
    so a subtle degradation, whose severity is the long-context change (not about zero)."""
    s = _series(np.random.default_rng(14), short_mult=1.0, long_mult=1.08)
    phases, _ = find_phases(s)
    deg = [p for p in phases if p.label == "degraded"]
    assert [p.stage for p in deg] == ["subtle_degradation"]
    assert deg[0].signals == ["ttft_long"]
    assert severity_signal(deg[0].stage, deg[0].signals) == "ttft_long"
    assert 0.0 < deg[0].severity_lo < 0.08 < deg[0].severity_hi


def test_a_decoding_slowdown_alone_is_a_phase_measured_on_output_speed() -> None:
    """Output speed -15 % for 30 days, TTFT unchanged: a subtle degradation whose moved
    signal and severity are the output speed, dated from the slowdown's start."""
    rng = np.random.default_rng(15)
    s = _series(rng)
    t = np.arange(s.short.size)
    inside = (t >= 50 * 24) & (t < 80 * 24)
    speed = np.log(60.0) + rng.normal(0, 0.05, t.size) + inside * np.log(0.85)
    phases, _ = find_phases(replace(s, speed=speed))
    deg = [p for p in phases if p.label == "degraded"]
    assert [(p.stage, p.signals) for p in deg] == [("subtle_degradation", ["output_speed"])]
    assert abs(deg[0].start - 50 * 24) <= 24 and abs(deg[0].end - 80 * 24) <= 24
    assert deg[0].severity_lo < -0.15 < deg[0].severity_hi < 0


def test_output_speed_does_not_move_phases_when_it_holds() -> None:
    """A steady output speed adds no phase to a stable provider."""
    rng = np.random.default_rng(16)
    s = _series(rng)
    speed = np.log(60.0) + rng.normal(0, 0.05, s.short.size)
    phases, _ = find_phases(replace(s, speed=speed))
    assert _labels(phases) == [("stable", "stable")]
