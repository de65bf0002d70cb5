"""The five warning signs from the field, each a recent window tested against a baseline.

Recent window: the last 3 days of data; baseline: the 28 days before it. One-sided tests in
the "worse" direction:

* long_context_slower: hourly long/short TTFT ratio, Mann-Whitney (AR(1)-deflated), relative
  shift of the median with a block-bootstrap CI; worth reporting from +10 %.
* more_busy_errors: busy errors (rate_limited, overloaded, server_error) per attempt, Fisher
  exact; rate ratio with a log-normal CI; worth reporting from x1.5. Busy errors come in
  bursts and follow demand (the trials of a day are not independent), so both the test and
  the interval use effective counts: divided by the baseline's day-to-day dispersion
  (``effects.day_dispersion``, quasi-binomial; shown in the detail when above 1). It
  assumes the recent window is as dispersed as the baseline.
* dumber_answers: wrong answers among scored probes and sanity-flagged answers among all, two
  Fisher exact tests combined by Bonferroni; effect = accuracy change (points). Where the
  same seeded items were answered in both windows, McNemar on them joins (Bonferroni).
* reduced_rate_limits: advertised request limit (else token limit) and request headroom
  (remaining / limit), each a Mann-Whitney on hourly medians, Bonferroni-combined; worth
  reporting from -5 % of the limit or -20 % of the headroom (headroom also falls when the
  same key serves more traffic). No headers means no test.
* fixed_answers_changed (from ``pipeline.drift``, passed in as ``extra``): the first-token
  distribution of fixed border inputs, and the logprobs of a fixed prompt, against a stored
  reference; a change detector (same name, another model or quantization), not a harm test.
* no_official_word: not a statistical test: fires when another sign fires and the incidents
  table has nothing for the vendor overlapping the window.

Benjamini-Hochberg controls the false discovery rate across every test of the run (q <= 5 %).
Persistence: a firing sign is *persistent* when the same test on either of the two previous,
non-overlapping windows had p < 5 % in the same direction (2 of 3 consecutive windows).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import numpy as np
import polars as pl

from pipeline.analysis.effects import (
    benjamini_hochberg,
    day_dispersion,
    fisher_dispersed,
    fisher_one_sided,
    mann_whitney_one_sided,
    rate_ratio_ci,
    relative_shift_ci,
)
from pipeline.analysis.paired_items import PairedTest
from pipeline.analysis.series import time_span

__all__ = ["SIGNS", "SignResult", "warning_signs"]

SIGNS = (
    "long_context_slower",
    "more_busy_errors",
    "dumber_answers",
    "fixed_answers_changed",
    "response_metadata_changed",
    "reduced_rate_limits",
    "no_official_word",
)
RECENT = timedelta(days=3)
BASELINE = timedelta(days=28)
_Q = 0.05
_MIN_PAIRS = 10  # fewer replayed items say too little for McNemar
_MIN_HEADROOM_DROP = 0.20  # relative fall of the median headroom worth reporting
_MIN = {
    "long_context_slower": 0.10,
    "more_busy_errors": 0.5,
    "dumber_answers": 0.02,
    "reduced_rate_limits": 0.05,
}


@dataclass(frozen=True)
class SignResult:
    provider: str
    model: str
    sign: str
    window_start: datetime
    window_end: datetime
    baseline_start: datetime
    baseline_end: datetime
    effect: float
    effect_lo: float
    effect_hi: float
    pvalue: float
    test: str
    detail: str
    worse: bool  # effect in the bad direction and large enough to report
    qvalue: float = float("nan")
    fires: bool = False
    persistent: bool | None = None


def _window(frame: pl.DataFrame, lo: datetime, hi: datetime) -> pl.DataFrame:
    return frame.filter((pl.col("hour") >= lo) & (pl.col("hour") < hi))


def _positive(x: np.ndarray) -> np.ndarray:
    """The finite positive values of ``x``: these signs compare logarithms, and a ratio or
    a limit of 0 (a TTFT or an advertised limit recorded as 0) has none."""
    return x[np.isfinite(x) & (x > 0)]


def _lag1(x: np.ndarray) -> float:
    if x.size < 10:
        return 0.0
    d = x - np.median(x)
    denom = float(d[:-1] @ d[:-1])
    return float(np.clip((d[:-1] @ d[1:]) / denom, 0.0, 0.9)) if denom > 0 else 0.0


def _tests(
    hourly: pl.DataFrame, penalty: pl.DataFrame, end: datetime
) -> dict[str, tuple[float, float, float, float, str, str, bool]]:
    """sign -> (effect, lo, hi, p, test, detail, worse) for one provider/model, one window."""
    ws, bs = end - RECENT, end - RECENT - BASELINE
    out: dict[str, tuple[float, float, float, float, str, str, bool]] = {}
    pen_b = _positive(_window(penalty, bs, ws)["penalty"].drop_nulls().to_numpy())
    pen_a = _positive(_window(penalty, ws, end)["penalty"].drop_nulls().to_numpy())
    if pen_a.size >= 6 and pen_b.size >= 6:
        lb, la = np.log(pen_b), np.log(pen_a)
        eff, lo, hi = relative_shift_ci(lb, la)
        p = mann_whitney_one_sided(lb, la, _lag1(lb))
        out["long_context_slower"] = (
            eff, lo, hi, p, "mann-whitney (AR(1)-deflated)",
            f"long/short TTFT ratio {math.exp(np.median(lb)):.2f} -> {math.exp(np.median(la)):.2f}",
            eff >= _MIN["long_context_slower"],
        )  # fmt: skip
    base, rec = _window(hourly, bs, ws), _window(hourly, ws, end)
    n_b, n_a = int(base["n"].sum()), int(rec["n"].sum())
    if n_a and n_b:
        e_b, e_a = int(base["n_busy"].sum()), int(rec["n_busy"].sum())
        phi = _busy_dispersion(base)
        eff, lo, hi = rate_ratio_ci(e_b, n_b, e_a, n_a, phi)
        test, detail = "fisher exact", f"busy errors {e_b}/{n_b} -> {e_a}/{n_a}"
        if phi > 1.0:
            test = "fisher exact on effective counts (day-to-day dispersion)"
            detail += f"; dispersion {phi:.2f} (counts divided by it)"
        out["more_busy_errors"] = (
            eff, lo, hi, fisher_dispersed(e_b, n_b, e_a, n_a, phi), test, detail,
            eff >= _MIN["more_busy_errors"],
        )  # fmt: skip
        out["dumber_answers"] = _dumber(base, rec, n_b, n_a)
    limits = _limits(base, rec)
    if limits is not None:
        out["reduced_rate_limits"] = limits
    return out


def _busy_dispersion(base: pl.DataFrame) -> float:
    """Day-to-day dispersion of the baseline's busy-error counts (1.0: binomial)."""
    days = (
        base.group_by(pl.col("hour").dt.truncate("1d").alias("day"))
        .agg(pl.col("n").sum(), pl.col("n_busy").sum())
        .sort("day")
    )
    return day_dispersion(days["n_busy"].to_numpy(), days["n"].to_numpy())


def _dumber(
    base: pl.DataFrame, rec: pl.DataFrame, n_b: int, n_a: int
) -> tuple[float, float, float, float, str, str, bool]:
    sc_b, sc_a = int(base["n_scored"].sum()), int(rec["n_scored"].sum())
    w_b = sc_b - int(base["n_correct"].sum())
    w_a = sc_a - int(rec["n_correct"].sum())
    f_b, f_a = int(base["n_flagged"].sum()), int(rec["n_flagged"].sum())
    p_acc = fisher_one_sided(w_b, sc_b, w_a, sc_a) if sc_a and sc_b else float("nan")
    p_flag = fisher_one_sided(f_b, n_b, f_a, n_a)
    ps = [p for p in (p_acc, p_flag) if math.isfinite(p)]
    p = min(1.0, len(ps) * min(ps)) if ps else float("nan")
    if sc_a and sc_b:
        acc_b, acc_a = 1 - w_b / sc_b, 1 - w_a / sc_a
        diff = acc_a - acc_b
        se = math.sqrt(acc_a * (1 - acc_a) / sc_a + acc_b * (1 - acc_b) / sc_b)
        lo, hi = diff - 1.96 * se, diff + 1.96 * se
    else:
        acc_b = acc_a = diff = lo = hi = float("nan")
    flags_up = f_a / n_a > 2 * f_b / n_b and f_a >= 3
    worse = (math.isfinite(diff) and -diff >= _MIN["dumber_answers"]) or flags_up
    detail = (
        f"accuracy {acc_b:.3f} -> {acc_a:.3f} (p={p_acc:.3g}); "
        f"sanity flags {f_b}/{n_b} -> {f_a}/{n_a} (p={p_flag:.3g})"
    )
    return diff, lo, hi, p, "fisher exact x2 (accuracy, sanity flags), Bonferroni", detail, worse


def _limits(
    base: pl.DataFrame, rec: pl.DataFrame
) -> tuple[float, float, float, float, str, str, bool] | None:
    """Advertised limit and headroom (remaining / limit), each a one-sided Mann-Whitney on
    hourly medians, combined by Bonferroni. Effect: relative change of the limit when it
    moved, else of the median headroom (a smaller headroom at the same limit is less
    capacity for us; it also falls when the same key serves more traffic, hence the
    higher bar)."""
    tests: list[tuple[float, float, float, float, str, bool]] = []
    for col in ("requests_limit", "tokens_limit"):
        b = _positive(base[col].drop_nulls().to_numpy().astype(float))
        a = _positive(rec[col].drop_nulls().to_numpy().astype(float))
        if a.size >= 3 and b.size >= 3:
            lb, la = np.log(b), np.log(a)
            eff, lo, hi = relative_shift_ci(lb, la)
            p = mann_whitney_one_sided(la, lb, 0.0)  # 'baseline larger' = limits went down
            detail = f"{col} median {np.median(b):.0f} -> {np.median(a):.0f}"
            tests.append((eff, lo, hi, p, detail, eff <= -_MIN["reduced_rate_limits"]))
            break
    if "requests_headroom" in base.columns:
        b = base["requests_headroom"].drop_nulls().to_numpy().astype(float)
        a = rec["requests_headroom"].drop_nulls().to_numpy().astype(float)
        if a.size >= 6 and b.size >= 6 and np.median(b) > 0:
            # 429s report zero remaining: floor at 0.1 % so the log stays finite
            lb, la = np.log(np.maximum(b, 1e-3)), np.log(np.maximum(a, 1e-3))
            eff, lo, hi = relative_shift_ci(lb, la)
            p = mann_whitney_one_sided(la, lb, _lag1(lb))
            detail = f"requests headroom median {np.median(b):.2f} -> {np.median(a):.2f}"
            tests.append((eff, lo, hi, p, detail, eff <= -_MIN_HEADROOM_DROP))
    if not tests:
        return None
    ps = [t[3] for t in tests if math.isfinite(t[3])]
    p = min(1.0, len(ps) * min(ps)) if ps else float("nan")
    eff, lo, hi = next(((t[0], t[1], t[2]) for t in tests if t[5]), tests[0][:3])
    name = "mann-whitney" if len(tests) == 1 else "mann-whitney x2 (limit, headroom), Bonferroni"
    detail = "; ".join(f"{t[4]} (p={t[3]:.3g})" for t in tests)
    return eff, lo, hi, p, name, detail, any(t[5] for t in tests)


def warning_signs(
    hourly: pl.DataFrame,
    penalty: pl.DataFrame,
    incidents: pl.DataFrame,
    vendors: dict[tuple[str, str], str | None],
    end: datetime | None = None,
    extra: Sequence[SignResult] = (),
    paired: Mapping[tuple[str, str], PairedTest] | None = None,
) -> list[SignResult]:
    """All five signs for every (provider, model) in ``hourly`` (aggregated over contexts),
    plus ``extra`` signs tested elsewhere (fixed-input drift), which join the BH control and
    keep their own persistence. ``paired``: McNemar on items seen in both windows, added
    to dumber_answers (see ``_with_pairs``)."""
    if hourly.height == 0:
        return []
    end = end or (time_span(hourly["hour"])[1] + timedelta(hours=1))
    results: list[SignResult] = []
    history: dict[tuple[str, str, str], list[tuple[float, bool]]] = {}
    for (provider, model), part in hourly.group_by(["provider", "model"], maintain_order=True):
        pen = penalty.filter((pl.col("provider") == provider) & (pl.col("model") == model))
        for k in range(3):
            at = end - k * RECENT
            for sign, vals in _tests(part, pen, at).items():
                key = (str(provider), str(model), sign)
                history.setdefault(key, []).append((vals[3], vals[6]))
                if k == 0:
                    eff, lo, hi, p, test, detail, worse = vals
                    results.append(
                        SignResult(
                            str(provider), str(model), sign, at - RECENT, at,
                            at - RECENT - BASELINE, at - RECENT, eff, lo, hi, p, test,
                            detail, worse,
                        )
                    )  # fmt: skip
    pairs = paired or {}
    results = [_with_pairs(r, pairs.get((r.provider, r.model))) for r in results]
    results += extra
    qs = benjamini_hochberg([r.pvalue for r in results])
    final: list[SignResult] = []
    for r, q in zip(results, qs, strict=True):
        fires = bool(math.isfinite(q) and q <= _Q and r.worse)
        past = history.get((r.provider, r.model, r.sign))
        if past is None:
            persistent = fires and bool(r.persistent)
        else:
            persistent = fires and any(math.isfinite(p) and p < 0.05 and w for p, w in past[1:])
        final.append(replace(r, qvalue=q, fires=fires, persistent=persistent))
    final += _no_official_word(final, incidents, vendors, end)
    return final


def _with_pairs(sign: SignResult, test: PairedTest | None) -> SignResult:
    """dumber_answers with the paired test of the same window: Bonferroni over its p and
    McNemar's one-sided p, the flip rate in the detail (flips can hide in equal accuracy)."""
    if sign.sign != "dumber_answers" or test is None or test.pairs < _MIN_PAIRS:
        return sign
    p = min(1.0, 2 * min(sign.pvalue, test.p_worse)) if math.isfinite(sign.pvalue) else 1.0
    detail = (
        f"{sign.detail}; paired items {test.pairs}: {test.became_wrong} right->wrong, "
        f"{test.became_right} wrong->right (McNemar p={test.p_worse:.3g}), flip rate "
        f"{test.flip_rate:.1%} (95 % CI {test.flip_low:.1%}-{test.flip_high:.1%})"
    )
    worse = sign.worse or -test.accuracy_change >= _MIN["dumber_answers"]
    return replace(sign, pvalue=p, detail=detail, worse=worse, test=f"{sign.test}; McNemar")


def _no_official_word(
    results: list[SignResult],
    incidents: pl.DataFrame,
    vendors: dict[tuple[str, str], str | None],
    end: datetime,
) -> list[SignResult]:
    out = []
    for provider, model in sorted({(r.provider, r.model) for r in results}):
        firing = [r.sign for r in results if (r.provider, r.model) == (provider, model) and r.fires]
        vendor = vendors.get((provider, model))
        ws = end - RECENT
        covered = 0
        if vendor and incidents.height:
            inc = incidents.filter(pl.col("vendor") == vendor)
            start_day, end_day = ws.date(), end.date()
            inc = inc.filter(
                (pl.col("start_date") <= end_day)
                & (pl.col("end_date").is_null() | (pl.col("end_date") >= start_day))
            )
            covered = inc.height
        fires = bool(firing) and covered == 0
        detail = (
            f"signs firing: {', '.join(firing) or 'none'}; "
            f"incidents recorded for {vendor or 'unknown vendor'} in the window: {covered}"
        )
        out.append(
            SignResult(
                provider, model, "no_official_word", ws, end, ws - BASELINE, ws,
                float(covered), float("nan"), float("nan"), float("nan"),
                "incidents table lookup", detail, fires, float("nan"), fires,
                None if not fires else all(
                    r.persistent for r in results
                    if (r.provider, r.model) == (provider, model) and r.fires
                ),
            )
        )  # fmt: skip
    return out
