"""Degradation phases of one provider/model, mapped to the stages users describe.

1. Change points of the key signals (deseasonalized log short- and long-context TTFT, log
   long/short penalty, log output speed, daily error rate, daily accuracy) are found with
   ``changepoints.detect`` and merged when closer than a day. Long-context TTFT is segmented
   on its own: the penalty (long - short) carries the short-context noise too, so a subtle
   long-context slowdown shows in it later or not at all.
2. The *baseline* is the best sustained state: among segments lasting >= 3 days whose errors,
   accuracy and flags are no worse than another such segment's (step 3's count tests,
   Bonferroni over the comparisons), the one with the lowest short-context TTFT.
3. Each segment is compared with the baseline signal by signal (one-sided Mann-Whitney,
   deflated for the baseline's lag-1 autocorrelation, for latency; Fisher exact for errors,
   accuracy and sanity flags; errors and flags come in bursts, and wrong answers may cluster
   by day, so their counts are first divided by the baseline's day-to-day dispersion,
   ``effects.day_dispersion``). A latency signal's p is at least that of its whole series
   changing level anywhere (``series_gate``): the Mann-Whitney compares stretches the
   search chose, and alone it was < 0.01 on a quarter of changeless series. A signal
   *moved* when p < 0.01 and the effect passes a minimum worth reporting (latency +5 %,
   long-context penalty +10 %, time per output token +5 %, error rate x1.5 and +0.5 pt,
   accuracy -2 pt, flags x2). Output speed is tested as its inverse (time per token, so
   up is worse like TTFT) and reported as the change in speed.
4. Label: degraded when a signal moved for the worse; recovering when still off, no signal
   is worse than in the segment before (same tests and minimum effects), and either that
   segment was recovering or some signal got better than in it; stable otherwise. Stage:
   errors, accuracy or flags moved -> major_degradation; long-context penalty moved ->
   long_context_issues; otherwise subtle_degradation; recovering -> recovery.
5. A stable -> degraded boundary is moved to where the latency signals that moved in the
   episode began to depart: a joint flat-ramp-flat (broken-line) fit, kept only when it
   beats an abrupt step, with a 95 % likelihood-ratio interval of the onset kept with the
   phase (``onset.ramp_fit``). So a gradual degradation is dated from its start rather
   than its middle.
6. Adjacent segments with the same label and stage form one phase, unless a degradation's
   severity signal moved again between them (>= 5 %, p < 0.01, gated like step 3 on the
   phase's own stretch), so a phase reports one level; a piece under 3 days leading into
   the next phase of its stage joins it. Severity is the relative TTFT change against the
   baseline with a block-bootstrap 95 % CI, on long-context TTFT for long_context_issues
   or when only long context moved, on output speed when only decoding slowed
   (``severity_signal``), short-context TTFT otherwise.

The per-day probability of being degraded is ``pipeline.analysis.degraded_days``; the
dataclasses are in ``pipeline.analysis.phase_types``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import replace

import numpy as np

from pipeline.analysis.break_tests import series_change_pvalue
from pipeline.analysis.changepoints import detect
from pipeline.analysis.effects import (
    day_dispersion,
    fisher_dispersed,
    mann_whitney_one_sided,
    relative_shift_ci,
)
from pipeline.analysis.metric_rows import search_scale
from pipeline.analysis.onset import lag1, ramp_fit
from pipeline.analysis.phase_types import FloatArray, IntArray, Phase, ProviderSeries, Segment

__all__ = [
    "MIN_BASELINE_HOURS",
    "MIN_LATENCY_EFFECT",
    "Phase",
    "ProviderSeries",
    "Segment",
    "find_phases",
    "refine_onsets",
    "severity_signal",
]

_ALPHA = 0.01
MIN_BASELINE_HOURS = 72  # hours with short-context TTFT a baseline needs (3 days)
MIN_LATENCY_EFFECT = 0.05  # smallest relative latency shift worth a phase
_MIN_PENALTY = 0.10
_MIN_ERROR_RATIO = 1.5
_MIN_ERROR_DIFF = 0.005
_MIN_ACCURACY_DROP = 0.02
_MIN_FLAG_RATIO = 2.0
_MERGE_HOURS = 24
_LATENCY = frozenset({"ttft_short", "ttft_long", "long_context_penalty", "output_speed"})


def _daily_breaks(events: IntArray | None, totals: IntArray | None) -> list[int]:
    """Change points of a daily rate, returned as hour indices (start of the day), searched
    on the scale the rate change points are (``metric_rows.search_scale``: a raw rate's
    noise grows with the rate, so the step a phase starts with was missed or dated late)."""
    if events is None or totals is None or totals.sum() == 0:
        return []
    days = events.size // 24
    if days < 6:
        return []
    ev = events[: days * 24].reshape(days, 24).sum(axis=1)
    tot = totals[: days * 24].reshape(days, 24).sum(axis=1)
    return [d * 24 for d in detect(search_scale(ev, tot), monitor=True)]


def _merge(breaks: list[int], n: int) -> list[int]:
    out: list[int] = []
    for b in sorted(set(breaks)):
        if 0 < b < n and (not out or b - out[-1] >= _MERGE_HOURS):
            out.append(b)
    return out


def candidate_breaks(
    s: ProviderSeries, searched: Mapping[str, list[int]] | None = None
) -> list[int]:
    """Union of the change points of every key signal, in hour indices. ``searched``: the
    ``detect`` breaks already found for "short", "long" or "speed" on exactly these arrays
    (``metric_rows.change_rows`` searched them), so they are not searched twice."""
    known = searched or {}

    def breaks_of(signal: str, x: FloatArray) -> list[int]:
        return list(known[signal]) if signal in known else detect(x, monitor=True)

    breaks = breaks_of("short", s.short)
    if s.long is not None:
        breaks += detect(s.long - s.short, monitor=True)
        breaks += breaks_of("long", s.long)
    if s.speed is not None:
        breaks += breaks_of("speed", s.speed)
    breaks += _daily_breaks(s.n_errors, s.n)
    if s.n_scored is not None and s.n_correct is not None:
        wrong = s.n_scored - s.n_correct
        breaks += _daily_breaks(wrong, s.n_scored)
    return _merge(breaks, s.short.size)


def _sum(a: IntArray | None, lo: int, hi: int) -> int:
    return int(a[lo:hi].sum()) if a is not None else 0


def _level_shift(before: FloatArray, after: FloatArray) -> tuple[float, float] | None:
    """(median of ``after`` minus median of ``before``, one-sided p that ``after`` is higher:
    Mann-Whitney deflated for the lag-1 dependence of ``before``); None with fewer than 6
    finite values on a side."""
    fb, fa = before[np.isfinite(before)], after[np.isfinite(after)]
    p = mann_whitney_one_sided(before, after, rho=lag1(before))
    if fb.size < 6 or fa.size < 6 or not math.isfinite(p):
        return None
    return float(np.median(fa) - np.median(fb)), p


def _latency_signals(s: ProviderSeries) -> dict[str, FloatArray]:
    """The latency signals ``_compare`` tests, by name, as it reads them."""
    out = {"ttft_short": s.short}
    if s.long is not None:
        out["ttft_long"] = s.long
        out["long_context_penalty"] = s.long - s.short
    slowness = s.slowness()
    if slowness is not None:
        out["output_speed"] = slowness
    return out


def series_gate(s: ProviderSeries, edges: list[int]) -> dict[str, float]:
    """For each latency signal, the p-value that its level changes anywhere in the series
    (``break_tests.series_change_pvalue``, the search's breaks ``edges`` only centring the
    fit). A segment's own test compares stretches the search chose, so it is small on
    changeless noise too; a segment's p-value is the larger of the two, so a changeless
    series shows a phase at p < alpha in at most about alpha of cases (closed testing:
    the segment is tested only once the series as a whole has changed)."""
    return {name: series_change_pvalue(x, edges) for name, x in _latency_signals(s).items()}


def _compare(
    s: ProviderSeries,
    seg: tuple[int, int],
    base: tuple[int, int],
    gate: Mapping[str, float] | None = None,
) -> Segment:
    """Which signals moved for the worse in ``seg`` relative to ``base``; a latency
    signal's p is at least its ``gate`` (``series_gate``), when given."""
    (lo, hi), (blo, bhi) = seg, base
    moved: dict[str, float] = {}
    pvals: dict[str, float] = {}

    def latency(name: str, series: FloatArray | None, minimum: float) -> None:
        shift = None if series is None else _level_shift(series[blo:bhi], series[lo:hi])
        if shift is None:
            return
        effect, p = math.expm1(shift[0]), shift[1]
        if gate is not None and name in gate:
            p = max(p, gate[name])  # a NaN gate (under 12 values) never meets a test
        pvals[name] = p
        if p < _ALPHA and effect >= minimum:
            moved[name] = effect

    latency("ttft_short", s.short, MIN_LATENCY_EFFECT)
    latency("ttft_long", s.long, MIN_LATENCY_EFFECT)
    if s.long is not None:
        latency("long_context_penalty", s.long - s.short, _MIN_PENALTY)
    latency("output_speed", s.slowness(), MIN_LATENCY_EFFECT)
    if "output_speed" in moved:  # reported as the change in speed (negative: slower)
        moved["output_speed"] = 1.0 / (1.0 + moved["output_speed"]) - 1.0
    _counts(s, seg, base, moved, pvals)
    return Segment(lo, hi, moved, pvals)


def _base_dispersion(events: IntArray, trials: IntArray, base: tuple[int, int]) -> float:
    """Day-to-day dispersion of the baseline's counts, per 24-hour block from its start.

    Days, not shorter blocks: busy and server errors come in bursts lasting hours to days,
    and blocks shorter than a burst would miss the correlation between neighbours (too
    small a factor); a day also averages out the daily demand rhythm of errors. The price:
    a baseline under ``effects.MIN_DISPERSION_DAYS`` days gets 1.0 (binomial)."""
    blo, bhi = base
    days = -(-(bhi - blo) // 24)
    pad = days * 24 - (bhi - blo)
    e = np.pad(events[blo:bhi], (0, pad)).reshape(days, 24).sum(axis=1)
    n = np.pad(trials[blo:bhi], (0, pad)).reshape(days, 24).sum(axis=1)
    return day_dispersion(e, n)


def _counts(
    s: ProviderSeries,
    seg: tuple[int, int],
    base: tuple[int, int],
    moved: dict[str, float],
    pvals: dict[str, float],
    alpha: float = _ALPHA,
) -> None:
    """Exact tests on counts divided by the baseline's day-to-day dispersion: probes of one
    error burst are no independent trials, nor are answers on a day a model is off (a
    binomial baseline gets a factor of about 1). A count moved at p < ``alpha``."""
    (lo, hi), (blo, bhi) = seg, base
    n_a, n_b = _sum(s.n, lo, hi), _sum(s.n, blo, bhi)
    e_a, e_b = _sum(s.n_errors, lo, hi), _sum(s.n_errors, blo, bhi)
    if n_a and n_b and s.n is not None and s.n_errors is not None:
        phi = _base_dispersion(s.n_errors, s.n, base)
        p = fisher_dispersed(e_b, n_b, e_a, n_a, phi)
        ra, rb = e_a / n_a, e_b / n_b
        pvals["error_rate"] = p
        if p < alpha and ra >= _MIN_ERROR_RATIO * rb and ra - rb >= _MIN_ERROR_DIFF:
            moved["error_rate"] = ra / max(rb, 1e-12) - 1
    sc_a, sc_b = _sum(s.n_scored, lo, hi), _sum(s.n_scored, blo, bhi)
    if sc_a and sc_b and s.n_scored is not None and s.n_correct is not None:
        w_a = sc_a - _sum(s.n_correct, lo, hi)
        w_b = sc_b - _sum(s.n_correct, blo, bhi)
        phi = _base_dispersion(s.n_scored - s.n_correct, s.n_scored, base)
        p = fisher_dispersed(w_b, sc_b, w_a, sc_a, phi)
        drop = w_a / sc_a - w_b / sc_b
        pvals["accuracy"] = p
        if p < alpha and drop >= _MIN_ACCURACY_DROP:
            moved["accuracy"] = -drop
    if n_a and n_b and s.n is not None and s.n_flagged is not None:
        f_a, f_b = _sum(s.n_flagged, lo, hi), _sum(s.n_flagged, blo, bhi)
        p = fisher_dispersed(f_b, n_b, f_a, n_a, _base_dispersion(s.n_flagged, s.n, base))
        pvals["sanity_flags"] = p
        if p < alpha and f_a / n_a >= _MIN_FLAG_RATIO * max(f_b / n_b, 1e-12) and f_a >= 3:
            moved["sanity_flags"] = (f_a / n_a) / max(f_b / n_b, 1e-12) - 1


def _baseline(s: ProviderSeries, edges: list[int]) -> tuple[int, int]:
    """The best sustained segment: the lowest short TTFT among segments with >= 3 days of
    data whose errors, accuracy and flags are no worse than any other such segment's.

    Fast alone is not good: a provider shedding load answers fast with many errors, and
    that stretch as the baseline hides every later error rise (and calls normal service a
    slowdown). "Worse" is ``_counts`` against the other segment as the baseline, at
    p < 0.01 / (candidates - 1) (Bonferroni: each candidate is tested against all the
    others, and a good one excluded by chance would move the baseline into a degradation)
    and a material effect. Where every candidate is worse than some other on a different
    count, the lowest TTFT alone decides; without candidates, the longest segment."""
    candidates: list[tuple[float, tuple[int, int]]] = []
    longest = (0, 0)
    for lo, hi in itertools.pairwise(edges):
        vals = s.short[lo:hi]
        vals = vals[np.isfinite(vals)]
        if hi - lo > longest[1] - longest[0]:
            longest = (lo, hi)
        if vals.size >= MIN_BASELINE_HOURS:
            candidates.append((float(np.median(vals)), (lo, hi)))
    if not candidates:
        return longest
    candidates.sort(key=lambda c: c[0])
    alpha = _ALPHA / max(1, len(candidates) - 1)
    for _, seg in candidates:
        others = (other for _, other in candidates if other != seg)
        if not any(_counts_worse(s, seg, other, alpha) for other in others):
            return seg
    return candidates[0][1]


def _counts_worse(
    s: ProviderSeries, seg: tuple[int, int], ref: tuple[int, int], alpha: float
) -> bool:
    """Did errors, accuracy or flags move for the worse in ``seg`` against ``ref``?"""
    moved: dict[str, float] = {}
    _counts(s, seg, ref, moved, {}, alpha)
    return bool(moved)


def _label(
    segments: list[Segment], s: ProviderSeries, gate: Mapping[str, float] | None = None
) -> list[Segment]:
    out: list[Segment] = []
    for seg in segments:
        label, stage = "stable", "stable"
        if seg.moved:
            label = "degraded"
            if {"error_rate", "accuracy", "sanity_flags"} & seg.moved.keys():
                stage = "major_degradation"
            elif "long_context_penalty" in seg.moved:
                stage = "long_context_issues"
            else:
                stage = "subtle_degradation"
            prev = out[-1] if out else None
            after_degraded = prev is not None and prev.label in ("degraded", "recovering")
            if prev is not None and after_degraded and _improving(prev, seg, s, gate):
                label, stage = "recovering", "recovery"
        out.append(Segment(seg.start, seg.end, seg.moved, seg.pvalues, label, stage))
    return out


def _improving(
    prev: Segment, seg: Segment, s: ProviderSeries, gate: Mapping[str, float] | None = None
) -> bool:
    """The provider is on its way back. A label changes only on evidence, from the tests
    and minimum effects a segment is compared with the baseline by (``_compare``, here
    with the segment before as reference): a recovery goes on unless some signal got
    worse than in the segment before; a degradation turns into a recovery when, besides
    that, some signal got better. (Comparing point estimates called a three-day stretch of
    a recovery a new major degradation whenever its error rate came out a little higher
    by chance, or crossed the bar against the baseline that the stretch before missed.)"""
    here, before = (seg.start, seg.end), (prev.start, prev.end)
    if _compare(s, here, before, gate).moved:
        return False
    return prev.label == "recovering" or bool(_compare(s, before, here, gate).moved)


def find_phases(
    s: ProviderSeries, seed: int = 0, searched: Mapping[str, list[int]] | None = None
) -> tuple[list[Phase], list[Segment]]:
    """Phases (merged segments) and the raw labelled segments of one provider/model
    (``searched``: see ``candidate_breaks``)."""
    n = s.short.size
    if n == 0:
        return [], []
    edges = [0, *candidate_breaks(s, searched), n]
    base = _baseline(s, edges)
    gate = series_gate(s, edges) if len(edges) > 2 else {}
    segments = [
        _compare(s, (lo, hi), base, gate) if (lo, hi) != base else Segment(lo, hi)
        for lo, hi in itertools.pairwise(edges)
    ]
    labelled = refine_onsets(_label(segments, s, gate), s)
    return _merge_phases(labelled, s, base, seed), labelled


def refine_onsets(segments: list[Segment], s: ProviderSeries) -> list[Segment]:
    """Move each stable -> non-stable boundary to where the moved latency signals began to
    depart (flat-ramp-flat fit), so a gradual degradation is dated from its start.

    The left level comes from the whole run of stable segments before the boundary: the
    first, not yet significant, stretch of a ramp is often cut off as a short "stable"
    segment, and its level alone would date the departure late. Stable pieces after the
    fitted onset join the degraded segment.
    """
    out = list(segments)
    i = 1
    while i < len(out):
        prev, seg = out[i - 1], out[i]
        if prev.label != "stable" or seg.label == "stable":
            i += 1
            continue
        j = i - 1
        while j > 0 and out[j - 1].label == "stable":
            j -= 1
        run_start, run_end = out[j].start, seg.end
        run_moved = set(seg.moved)
        ends = [seg.end]
        for nxt in out[i + 1 :]:
            if nxt.label == "stable":
                break
            run_end = nxt.end
            run_moved |= nxt.moved.keys()
            ends.append(nxt.end)
        # Every latency signal that moved in the episode dates it (they share the onset;
        # a signal that moves more strongly later, e.g. long context, carries most of the
        # information about when the departure began).
        moved = [s.short] if "ttft_short" in run_moved else []
        if s.long is not None and {"ttft_long", "long_context_penalty"} & run_moved:
            moved.append(s.long)  # the penalty is long - short: not a third signal
        slowness = s.slowness()
        if slowness is not None and "output_speed" in run_moved:
            moved.append(slowness)
        if not moved:
            i += 1
            continue
        # A break found on one noisy latency signal may come early, so the joint fit may
        # also move it later within its segment; a boundary where counts moved (errors
        # first) is kept as the latest onset.
        latest = seg.end - 1 if seg.moved.keys() <= _LATENCY else seg.start
        onset, o_lo, o_hi = ramp_fit(moved, run_start, seg.start, run_end, ends=ends, latest=latest)
        if run_start == 0 and onset <= 1:
            # The departure began with the data or before it: the series starts in this
            # segment, not with a stable hour (which the release cycles took for an onset).
            out[i] = replace(seg, start=0, onset_lo=None, onset_hi=None)
            del out[:i]
            i = 1
            continue
        onset, o_lo = max(run_start + 1, onset), max(run_start + 1, o_lo)
        # k: the stable segment that contains the onset; later stable pieces are absorbed.
        k = max(m for m in range(j, i) if out[m].start < onset)
        out[k] = replace(out[k], end=onset)
        out[i] = replace(seg, start=onset, onset_lo=o_lo, onset_hi=max(o_hi, onset))
        del out[k + 1 : i]
        i = k + 2
    return out


def severity_signal(stage: str, signals: Iterable[str]) -> str:
    """The signal a phase's severity is measured on: long-context TTFT for long-context
    issues or when long-context TTFT moved and short-context TTFT did not; output speed
    when neither TTFT moved but decoding slowed; short-context TTFT otherwise. (A
    slowdown seen only in long prompts or in decoding would otherwise report a
    short-context TTFT change of about zero.)"""
    moved = set(signals)
    if stage == "long_context_issues" or ("ttft_long" in moved and "ttft_short" not in moved):
        return "ttft_long"
    if "output_speed" in moved and "ttft_short" not in moved:
        return "output_speed"
    return "ttft_short"


def _severity_series(group: list[Segment], s: ProviderSeries) -> FloatArray:
    """The log series of ``severity_signal`` (short-context TTFT when it is missing)."""
    signal = severity_signal(group[0].stage, {k for g in group for k in g.moved})
    series = {"ttft_long": s.long, "output_speed": s.speed}.get(signal)
    return s.short if series is None else series


def _moved_again(group: list[Segment], seg: Segment, s: ProviderSeries) -> bool:
    """Did the severity signal move again where ``seg`` starts: its median differs from the
    phase so far by >= 5 % at p < 0.01 (two-sided Mann-Whitney, deflated for lag-1
    dependence)? Then one phase would report a median over two levels, describing neither.
    The search chose where ``seg`` starts, so, as in ``_compare``, the p-value is at least
    that of the level changing anywhere in the phase so far and ``seg`` together
    (``break_tests.series_change_pvalue``): a split is a test at 1 %, not a search's cut."""
    series = _severity_series([*group, seg], s)
    lo = group[0].start
    shift = _level_shift(series[lo : group[-1].end], series[seg.start : seg.end])
    if shift is None:
        return False
    change, p_up = shift
    if abs(change) < math.log1p(MIN_LATENCY_EFFECT) or 2.0 * min(p_up, 1.0 - p_up) >= _ALPHA:
        return False
    edges = [g.start - lo for g in group] + [seg.start - lo, seg.end - lo]
    return series_change_pvalue(series[lo : seg.end], edges) < _ALPHA


def _phase_groups(segments: list[Segment], s: ProviderSeries) -> list[list[Segment]]:
    """Adjacent segments with the same label and stage form one phase, except that a
    degradation whose level moves again (``_moved_again``) starts a new phase: it worsened
    or eased within its stage. A degraded piece shorter than 3 days before a phase of the
    same stage is the way into that phase's level, so it joins that phase (it is dated
    from there, and a one-day stretch up a ramp is no phase of its own)."""
    groups: list[list[Segment]] = []
    for seg in segments:
        last = groups[-1] if groups else None
        if (
            last is not None
            and (last[-1].label, last[-1].stage) == (seg.label, seg.stage)
            and not (seg.label == "degraded" and _moved_again(last, seg, s))
        ):
            last.append(seg)
        else:
            groups.append([seg])
    for i in range(len(groups) - 2, -1, -1):
        here, nxt = groups[i], groups[i + 1]
        same = (here[0].label, here[0].stage) == (nxt[0].label, nxt[0].stage)
        short = here[-1].end - here[0].start < MIN_BASELINE_HOURS
        if same and short and here[0].label == "degraded":
            groups[i : i + 2] = [here + nxt]
    return groups


def _merge_phases(
    segments: list[Segment], s: ProviderSeries, base: tuple[int, int], seed: int
) -> list[Phase]:
    groups = _phase_groups(segments, s)
    phases = []
    for no, group in enumerate(groups, start=1):
        lo, hi = group[0].start, group[-1].end
        first = group[0]
        series = _severity_series(group, s)
        sev, sev_lo, sev_hi = relative_shift_ci(
            series[base[0] : base[1]], series[lo:hi], seed=seed + no
        )
        signals = sorted({k for g in group for k in g.moved})
        pmin = min((g.pvalues.get(k, 1.0) for g in group for k in g.moved), default=float("nan"))
        # 1 - the smallest p of the moved signals; a stable phase tested nothing as moved,
        # and "no change found" has no such number (it was 1.0, even after one hour)
        confidence = 1.0 - pmin if first.label != "stable" and math.isfinite(pmin) else math.nan
        phases.append(
            Phase(
                no,
                first.label,
                first.stage,
                lo,
                hi,
                sev,
                sev_lo,
                sev_hi,
                confidence,
                signals,
                first.onset_lo,
                first.onset_hi,
            )
        )
    return phases
