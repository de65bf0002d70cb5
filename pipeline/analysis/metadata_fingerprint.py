"""Response metadata as a fingerprint: what the provider says about itself, and its counts.

Four signs that another model (or serving stack) answers under the same name, each of the
recent window against the provider's own baseline:

* a ``reported_model`` value never seen in the baseline;
* a ``system_fingerprint`` value never seen in the baseline (OpenAI changes it with
  serving updates too: a prompt to look closer, not a verdict);
* input tokens per prompt character, per task family: the provider's own tokenizer on the
  same kind of prompt; another model family tokenizes differently (a proposal in the
  research note, not a validated method). Mann-Whitney, two-sided;
* reasoning tokens per answer, per task family: an effort change. Mann-Whitney, two-sided;
* the mix of upstreams a router names (``upstream_provider``, OpenRouter): traffic moved
  to other upstreams, which may run another quantization. A permutation test over days
  (``upstream_mix``); providers that never name an upstream have no such test.

The count tests assume calls are independent within each window; hourly rhythm is not
removed, so they should be read with the daily cycle in mind.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import polars as pl
from scipy.stats import mannwhitneyu

from pipeline.analysis.upstream_mix import COLUMN as UPSTREAM
from pipeline.analysis.upstream_mix import upstream_shift

__all__ = ["MIN_RELATIVE_SHIFT", "MetadataChange", "metadata_changes"]

MIN_RELATIVE_SHIFT = 0.02  # smaller shifts of a median are not reported
MIN_CALLS = 5  # per window and family, for a count test


@dataclass(frozen=True, slots=True)
class MetadataChange:
    provider: str
    # reported_model | system_fingerprint | tokens_per_char | reasoning_tokens |
    # upstream_provider
    kind: str
    detail: str
    p_value: float | None = None  # None: a new value is an event, not a test
    relative_shift: float | None = None  # recent median / baseline median - 1


def _new_values(
    base: pl.DataFrame, recent: pl.DataFrame, provider: str, column: str
) -> list[MetadataChange]:
    seen = set(base[column].drop_nulls().to_list())
    fresh = sorted(set(recent[column].drop_nulls().to_list()) - seen)
    if not seen or not fresh:
        return []
    before = ", ".join(sorted(seen))
    return [MetadataChange(provider, column, f"{value!r} (baseline: {before})") for value in fresh]


def _shift(
    base: pl.Series, recent: pl.Series, provider: str, family: str, kind: str
) -> MetadataChange | None:
    base, recent = base.drop_nulls(), recent.drop_nulls()
    if len(base) < MIN_CALLS or len(recent) < MIN_CALLS:
        return None
    before, after = float(base.median()), float(recent.median())  # type: ignore[arg-type]
    if before == 0:
        return None
    shift = after / before - 1
    if abs(shift) < MIN_RELATIVE_SHIFT:
        return None
    p = float(mannwhitneyu(recent.to_numpy(), base.to_numpy(), alternative="two-sided").pvalue)
    detail = f"{family}: median {before:.3g} -> {after:.3g}"
    return MetadataChange(provider, kind, detail, p, shift)


def metadata_changes(rows: pl.DataFrame, split_at: datetime) -> list[MetadataChange]:
    """Changes from the rows before ``split_at`` (baseline) to those from it on (recent).
    Columns: provider, started_at, reported_model, system_fingerprint, task_family,
    prompt_chars, input_tokens, reasoning_tokens; optionally upstream_provider."""
    rows = rows.with_columns(
        (pl.col("input_tokens") / pl.col("prompt_chars")).alias("tokens_per_char")
    )
    changes: list[MetadataChange] = []
    for (provider,), frame in rows.group_by("provider", maintain_order=True):
        base = frame.filter(pl.col("started_at") < split_at)
        recent = frame.filter(pl.col("started_at") >= split_at)
        for column in ("reported_model", "system_fingerprint"):
            changes += _new_values(base, recent, str(provider), column)
        moved = upstream_shift(frame, split_at)
        if moved is not None:
            changes.append(MetadataChange(str(provider), UPSTREAM, moved.detail, moved.p_value))
        for (family,), recent_family in recent.group_by("task_family", maintain_order=True):
            base_family = base.filter(pl.col("task_family") == family)
            for kind in ("tokens_per_char", "reasoning_tokens"):
                found = _shift(
                    base_family[kind], recent_family[kind], str(provider), str(family), kind
                )
                if found is not None:
                    changes.append(found)
    return changes
