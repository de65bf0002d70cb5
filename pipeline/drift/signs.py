"""Stored drift baselines as a warning sign: "the answers to fixed questions changed".

One ``SignResult`` per baseline with sampled days, for the latest day. Its p-value joins
the other signs under Benjamini-Hochberg: the border-input p is the share of simulated
unchanged days at least as far from the reference (the seeded null), the logprob p the
permutation test's, combined by Bonferroni when both exist. Effect: the day's mean TV minus
its expected value under the null, with +-1.96 null sd. Persistent: 3 days in a row far
from the reference. It detects change, not harm: read it as "look closer", with the
accuracy and flip tests beside it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from pipeline.analysis.answer_distribution import AnswerShift
from pipeline.analysis.drift_alarm import DEFAULT_RULE, null_p_value, simulate_null
from pipeline.analysis.logprob_tracking import logprob_test
from pipeline.analysis.warning_signs import BASELINE, RECENT, SignResult
from pipeline.drift.baseline import Baseline, load

__all__ = ["SIGN", "drift_signs", "load_baselines", "sign_of", "with_fixed_prompt"]

SIGN = "fixed_answers_changed"
_LT_ALPHA = 0.01
MIN_ANSWER_TV = 0.1  # a smaller move of the fixed_prompt answers is not worth reporting
_SMALL_P = 0.05  # below it, a move under MIN_ANSWER_TV is named as detectable but small


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
    """The sign for the latest sampled day, or None before any day has a distance.

    Unlike ``drift check`` (an alarm on the change, after which the trailing history
    becomes the new normal), the sign asks whether the answers still differ from the
    *accepted* reference: a day is far when |TV - null mean| > max(0.2, 4 null sd). It
    stays on until the user accepts a new baseline."""
    sampled = [d for d in baseline.days if d.distance is not None]
    if not sampled:
        return None
    rule, per_input = DEFAULT_RULE, baseline.settings.per_input
    null = simulate_null(baseline.reference, per_input, seed=seed)
    threshold = max(rule.min_abs, rule.sigmas * null.sd)
    far = [abs(float(d.distance or 0.0) - null.mean) > threshold for d in sampled]
    latest = sampled[-1]
    distance = float(latest.distance or 0.0)
    p_tv = null_p_value(baseline.reference, per_input, distance, seed=seed)
    lt = (
        [logprob_test(baseline.logprob_reference, latest.logprobs, seed=seed)]
        if latest.logprobs and baseline.logprob_reference
        else []
    )
    ps = [p_tv] + [t.p_value for t in lt]
    p = min(1.0, len(ps) * min(ps))
    moved = far[-1] or any(t.p_value <= _LT_ALPHA for t in lt)
    persistent = len(far) >= rule.consecutive and all(far[-rule.consecutive :])
    since = latest.day  # the first day of the latest run of far days
    for sample, is_far in zip(reversed(sampled), reversed(far), strict=True):
        if not is_far:
            break
        since = sample.day
    detail = (
        f"the answers to fixed questions changed on {since}; same model name "
        f"({baseline.model}): mean TV to the reference {distance:.2f}, expected "
        f"{null.mean:.2f} (p={p_tv:.2g})"
    )
    if lt:
        detail += f"; first-token logprobs p={lt[0].p_value:.2g}"
    if not moved:
        detail = (
            f"answers to fixed questions as before: mean TV to the reference {distance:.2f}, "
            f"expected {null.mean:.2f}"
        )
    start = datetime.combine(date.fromisoformat(latest.day), time(), tzinfo=UTC)
    accepted = datetime.fromisoformat(baseline.accepted_at)
    test = "border-input TV vs seeded null" + (", logprob permutation; Bonferroni" if lt else "")
    effect = distance - null.mean
    return SignResult(
        baseline.provider, baseline.model, SIGN, start, start + timedelta(days=1),
        accepted, start, effect, effect - 1.96 * null.sd, effect + 1.96 * null.sd, p,
        test, detail, moved, persistent=persistent,
    )  # fmt: skip


def drift_signs(folder: Path, *, seed: int = 0) -> list[SignResult]:
    """Signs of every baseline stored under ``folder``."""
    signs = [sign_of(b, seed=seed) for b in load_baselines(folder)]
    return [s for s in signs if s is not None]


def with_fixed_prompt(
    signs: list[SignResult], shifts: dict[tuple[str, str], AnswerShift], end: datetime
) -> list[SignResult]:
    """Add the fixed_prompt family's answer G-test (``answer_distribution``) to the sign of
    the same provider and model (Bonferroni over the two), or make it the sign where no
    drift baseline is stored."""
    out, left = [], dict(shifts)
    for sign in signs:
        shift = left.pop((sign.provider, sign.model), None)
        if shift is None:
            out.append(sign)
            continue
        moved = shift.tv >= MIN_ANSWER_TV
        out.append(
            replace(
                sign,
                pvalue=min(1.0, 2 * min(sign.pvalue, shift.p_value)),
                detail=f"{sign.detail}; {_answers_text(shift)}",
                test=f"{sign.test}; G-test on fixed_prompt answers; Bonferroni",
                worse=sign.worse or moved,
            )
        )
    for (provider, model), shift in left.items():
        start = end - RECENT
        out.append(
            SignResult(
                provider, model, SIGN, start, end, start - BASELINE, start, shift.tv,
                float("nan"), float("nan"), shift.p_value, "G-test on fixed_prompt answers",
                _answers_text(shift), shift.tv >= MIN_ANSWER_TV, persistent=False,
            )
        )  # fmt: skip
    return out


def _answers_text(shift: AnswerShift) -> str:
    """The G-test in words; a move the test detects but too small to report is called that,
    so a tiny p beside "as before" does not read as a contradiction."""
    # a TV just under the bar gets three significant digits, or "TV 0.10" reads as the bar
    near = shift.tv < MIN_ANSWER_TV <= round(shift.tv, 2)
    tv = f"{shift.tv:.3g}" if near else f"{shift.tv:.2f}"
    text = (
        f"answers to the fixed_prompt question: TV {tv} between the baseline "
        f"({shift.n_baseline} answers) and the last 3 days ({shift.n_recent} answers), "
        f"G-test p={shift.p_value:.2g}"
    )
    if shift.tv < MIN_ANSWER_TV and shift.p_value < _SMALL_P:
        text += f" (detectable, but under the TV {MIN_ANSWER_TV:.2f} reported as a change)"
    return text
