"""The response-metadata fingerprint as a warning sign, in the windows the other signs use.

Recent window: the last 3 days; baseline: the 28 days before (as ``warning_signs``). The
count tests of ``metadata_fingerprint`` (tokens per prompt character and reasoning tokens,
per family) and the upstream-mix test (where a router names two upstreams or more) are
combined by Bonferroni over every test that could have been run (two per family seen in
the recent window, plus one for the mix), so reporting only the shifts over 2 % (and mix
moves of 20 % of calls) does not hide multiplicity. A model name the provider never
reported before is a stated fact, not a sample: it gets p = 0 and fires. A new
``system_fingerprint`` alone is shown but is not worse (OpenAI rotates it with serving
updates); a moved upstream mix is worse (another upstream may serve another
quantization). Persistent: the same sign was worse with p < 0.05 in one of the two
previous, non-overlapping windows.
"""

from __future__ import annotations

import math
from datetime import datetime

import polars as pl

from pipeline.analysis.metadata_fingerprint import MetadataChange, metadata_changes
from pipeline.analysis.upstream_mix import COLUMN as UPSTREAM
from pipeline.analysis.upstream_mix import mix_testable
from pipeline.analysis.warning_signs import BASELINE, RECENT, SignResult

__all__ = ["SIGN", "metadata_signs"]

SIGN = "response_metadata_changed"
_TESTED = ("tokens_per_char", "reasoning_tokens", UPSTREAM)
_PER_FAMILY = 2  # tokens_per_char and reasoning_tokens
_UNCHANGED = {
    False: "reported model, fingerprint and token counts as before",
    True: "reported model, fingerprint, token counts and upstream mix as before",
}


def _judge(frame: pl.DataFrame, end: datetime) -> tuple[list[MetadataChange], float, bool, bool]:
    """(changes, Bonferroni p, worse, mix tested) of the window ending at ``end``."""
    window = frame.filter(
        (pl.col("started_at") >= end - RECENT - BASELINE) & (pl.col("started_at") < end)
    )
    changes = metadata_changes(window, end - RECENT)
    recent = window.filter(pl.col("started_at") >= end - RECENT)
    mixed = mix_testable(window, end - RECENT)
    tests = max(1, _PER_FAMILY * recent["task_family"].n_unique() + int(mixed))
    ps = [c.p_value for c in changes if c.kind in _TESTED and c.p_value is not None]
    p = min(1.0, tests * min(ps)) if ps else float("nan")
    if any(c.kind == "reported_model" for c in changes):
        p = 0.0
    worse = any(c.kind != "system_fingerprint" for c in changes)
    return changes, p, worse, mixed


def _effect(changes: list[MetadataChange]) -> float:
    shifts = [c.relative_shift for c in changes if c.relative_shift is not None]
    return max(shifts, key=abs) if shifts else float("nan")


def metadata_signs(rows: pl.DataFrame, end: datetime) -> list[SignResult]:
    """One sign per (provider, model) with rows in the recent window. Columns: those of
    ``metadata_changes`` plus ``model``."""
    out = []
    for (provider, model), frame in rows.group_by("provider", "model", maintain_order=True):
        if frame.filter(pl.col("started_at") >= end - RECENT).height == 0:
            continue
        changes, p, worse, mixed = _judge(frame, end)
        past = [_judge(frame, end - k * RECENT) for k in (1, 2)]
        persistent = worse and any(w and math.isfinite(q) and q < 0.05 for _, q, w, _ in past)
        parts = [
            f"{c.kind} {c.detail}" + (f" (p={c.p_value:.2g})" if c.p_value is not None else "")
            for c in changes
        ]
        detail = "; ".join(parts) or _UNCHANGED[mixed]
        test = "new values; Mann-Whitney x families, Bonferroni"
        if mixed:  # only routers that name their upstreams: the others read as before
            test = (
                "new values; Mann-Whitney x families; upstream mix by day (AR(1) across days); "
                "Bonferroni"
            )
        effect = _effect(changes)
        out.append(
            SignResult(
                str(provider), str(model), SIGN, end - RECENT, end, end - RECENT - BASELINE,
                end - RECENT, effect, float("nan"), float("nan"), p,
                test, detail, worse,
                persistent=persistent,
            )
        )  # fmt: skip
    return out
