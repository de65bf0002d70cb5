"""Stored drift baselines as a warning sign: "the answers to fixed questions changed".

One ``SignResult`` per baseline with sampled days, for the latest day. Its p-value joins
the other signs under Benjamini-Hochberg: the border-input p is the share of simulated
unchanged days at least as far from the reference (the seeded null), the logprob p the
permutation test's, combined by Bonferroni when both exist. Effect: the day's mean TV minus
its expected value, with +-1.96 sd of that expectation. Persistent: the alarm rule's
3 out days in a row. It detects change, not harm: read it as "look closer", with the
accuracy and flip tests beside it.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from pipeline.analysis.drift_alarm import DEFAULT_RULE, null_p_value
from pipeline.analysis.warning_signs import SignResult
from pipeline.drift.baseline import Baseline, load
from pipeline.drift.check import check_baseline

__all__ = ["SIGN", "drift_signs", "load_baselines", "sign_of"]

SIGN = "fixed_answers_changed"
_LT_ALPHA = 0.01


def load_baselines(folder: Path) -> list[Baseline]:
    """Every readable baseline under ``folder/drift`` (replaced ones are skipped)."""
    found = sorted((folder / "drift").glob("*/*.json"))
    baselines = []
    for path in found:
        if ".replaced-" in path.name:
            continue
        try:
            baselines.append(load(path))
        except ValueError:
            continue  # a hand-edited or foreign file must not stop the analysis
    return baselines


def sign_of(baseline: Baseline, *, seed: int = 0) -> SignResult | None:
    """The sign for the latest sampled day, or None before any day has a distance."""
    check = check_baseline(baseline, seed=seed, runs=50)
    if not check.days:
        return None
    day, verdict = check.days[-1]
    per_input = baseline.settings.per_input
    p_tv = null_p_value(baseline.reference, per_input, verdict.distance, seed=seed)
    latest_lt = [t for d, t in check.logprobs if d == day]
    ps = [p_tv] + [t.p_value for t in latest_lt]
    p = min(1.0, len(ps) * min(ps))
    sd = check.null.sd if verdict.baseline == "null" else verdict.threshold / DEFAULT_RULE.sigmas
    effect = verdict.distance - verdict.baseline_mean
    lt_moved = any(t.p_value <= _LT_ALPHA for t in latest_lt)
    recent = [v.out for _, v in check.days[-DEFAULT_RULE.consecutive :]]
    persistent = len(recent) == DEFAULT_RULE.consecutive and all(recent)
    since = day  # the first day of the latest run of out days
    for d, v in reversed(check.days):
        if not v.out:
            break
        since = d
    detail = (
        f"the answers to fixed questions changed on {since}; same model name "
        f"({baseline.model}): mean TV to the reference {verdict.distance:.2f}, expected "
        f"{verdict.baseline_mean:.2f} (p={p_tv:.2g})"
    )
    if latest_lt:
        detail += f"; first-token logprobs p={latest_lt[0].p_value:.2g}"
    if not (verdict.out or lt_moved):
        detail = f"answers to fixed questions as before: mean TV {verdict.distance:.2f}"
    start = datetime.combine(date.fromisoformat(day), time(), tzinfo=UTC)
    accepted = datetime.fromisoformat(baseline.accepted_at)
    test = "border-input TV vs seeded null"
    test += " + logprob permutation, Bonferroni" if latest_lt else ""
    return SignResult(
        baseline.provider, baseline.model, SIGN, start, start + timedelta(days=1),
        accepted, start, effect, effect - 1.96 * sd, effect + 1.96 * sd, p,
        test, detail, verdict.out or lt_moved, persistent=persistent,
    )  # fmt: skip


def drift_signs(folder: Path, *, seed: int = 0) -> list[SignResult]:
    """Signs of every baseline stored under ``folder``."""
    signs = [sign_of(b, seed=seed) for b in load_baselines(folder)]
    return [s for s in signs if s is not None]
