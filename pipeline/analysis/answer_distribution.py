"""The fixed_prompt family's answers as a distribution: did the same question's answers move?

``fixed_prompt`` asks the same question every run ("a whole number from 1 to 10 for a calm
afternoon"); any number is right, so accuracy says nothing, but the distribution of answers
is a fingerprint of the model and its sampling. A G-test (log-likelihood chi-square) on the
answers x window table compares the recent window with the baseline; categories are the
extracted answers (unparseable ones together). It assumes independent calls and at least a
few answers per category (sparse tables make it approximate); the TV distance between the
two answer distributions is the effect.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import polars as pl
from scipy.stats import chi2_contingency

from pipeline.analysis.border_inputs import total_variation

__all__ = ["FAMILY", "AnswerShift", "answer_shift", "fixed_prompt_shifts"]

FAMILY = "fixed_prompt"
MIN_ANSWERS = 20  # per window


@dataclass(frozen=True, slots=True)
class AnswerShift:
    g: float
    p_value: float
    tv: float
    n_baseline: int
    n_recent: int


def answer_shift(baseline: Sequence[str | None], recent: Sequence[str | None]) -> AnswerShift:
    """G-test of the two answer distributions (``None``: unparseable)."""
    before = Counter(a if a is not None else "?" for a in baseline)
    after = Counter(a if a is not None else "?" for a in recent)
    tv = total_variation(before, after)
    keys = sorted(set(before) | set(after))
    if len(keys) < 2 or not baseline or not recent:
        return AnswerShift(0.0, 1.0, tv, len(baseline), len(recent))
    table = np.array([[before[k] for k in keys], [after[k] for k in keys]])
    g, p, _, _ = chi2_contingency(table, lambda_="log-likelihood", correction=False)
    return AnswerShift(float(g), float(p), tv, len(baseline), len(recent))


def fixed_prompt_shifts(
    rows: pl.DataFrame, split_at: datetime
) -> dict[tuple[str, str], AnswerShift]:
    """Per (provider, model) with at least ``MIN_ANSWERS`` answered fixed_prompt probes on
    each side of ``split_at``. Columns: provider, model, started_at, task_family,
    extracted_answer."""
    fixed = rows.filter(pl.col("task_family") == FAMILY)
    out = {}
    for (provider, model), part in fixed.group_by("provider", "model", maintain_order=True):
        before = part.filter(pl.col("started_at") < split_at)["extracted_answer"].to_list()
        after = part.filter(pl.col("started_at") >= split_at)["extracted_answer"].to_list()
        if len(before) >= MIN_ANSWERS and len(after) >= MIN_ANSWERS:
            out[(str(provider), str(model))] = answer_shift(before, after)
    return out
