"""Paired item tests: the same seeded items answered in a baseline and a recent window.

Pooled accuracy hides what a quantized model does: about as many answers flip from right
to wrong as from wrong to right, so the mean barely moves while the answers change (Dutta
et al.; research note, section 1). Pairing each item with itself removes the item's
difficulty from the comparison. The exact McNemar test conditions on the discordant pairs:
under "nothing changed" a flip is as likely to go either way, so the number that became
wrong is Binomial(flips, 1/2). It assumes the items are independent and each was scored
the same way in both windows: one answer per item and window (the latest), because an item
answered more often in the 28-day baseline than in the 3-day window would otherwise look
worse there by chance alone (right "every time" is harder in ten tries than in one), and
unchanged answers would read as many wrong->right flips. The flip rate (flips / pairs) is
reported with a Wilson interval: it measures change whatever its direction.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass

import polars as pl
from scipy.stats import binomtest

__all__ = ["PairedTest", "paired_items", "paired_tests", "pairs_from_rows"]


@dataclass(frozen=True, slots=True)
class PairedTest:
    pairs: int
    became_wrong: int  # right in the baseline, wrong now
    became_right: int
    p_worse: float  # one-sided exact McNemar: more became wrong than right
    p_changed: float  # two-sided
    flip_rate: float
    flip_low: float  # 95 % Wilson interval of the flip rate
    flip_high: float

    @property
    def accuracy_change(self) -> float:
        """Recent minus baseline accuracy on the paired items (points, as a fraction)."""
        return (self.became_right - self.became_wrong) / self.pairs if self.pairs else 0.0


def paired_items(baseline: Mapping[Hashable, bool], recent: Mapping[Hashable, bool]) -> PairedTest:
    """The test on the items scored in both windows (others are ignored)."""
    shared = baseline.keys() & recent.keys()
    became_wrong = sum(1 for k in shared if baseline[k] and not recent[k])
    became_right = sum(1 for k in shared if recent[k] and not baseline[k])
    flips, pairs = became_wrong + became_right, len(shared)
    if flips:
        p_worse = binomtest(became_wrong, flips, 0.5, alternative="greater").pvalue
        p_changed = binomtest(became_wrong, flips, 0.5).pvalue
    else:
        p_worse = p_changed = 1.0
    low, high = (0.0, 1.0)
    if pairs:
        interval = binomtest(flips, pairs).proportion_ci(method="wilson")
        low, high = interval.low, interval.high
    return PairedTest(
        pairs, became_wrong, became_right, float(p_worse), float(p_changed),
        flips / pairs if pairs else 0.0, float(low), float(high),
    )  # fmt: skip


def pairs_from_rows(rows: pl.DataFrame, window: str = "window") -> tuple[dict, dict]:
    """Per-item correctness of the ``baseline`` and ``recent`` windows from probe rows
    (``task_family``, ``seed``, ``score_strict`` and a ``window`` column). Right means
    ``correct`` (an unparseable answer is not); an item scored several times in a window
    counts by its latest answer (by ``started_at`` when given, else the last row): one
    answer on each side, so an unchanged item is as likely to flip either way however
    often each window asked it."""
    scored = rows.filter(pl.col("score_strict").is_not_null())
    if "started_at" in scored.columns:
        scored = scored.sort("started_at", maintain_order=True)
    right = (pl.col("score_strict") == "correct").last()
    per_item = scored.group_by(window, "task_family", "seed", maintain_order=True).agg(right)
    out: dict[str, dict] = {"baseline": {}, "recent": {}}
    for name, family, seed, right in per_item.iter_rows():
        if name in out:
            out[name][(family, seed)] = bool(right)
    return out["baseline"], out["recent"]


def paired_tests(rows: pl.DataFrame) -> dict[tuple[str, str], PairedTest]:
    """``paired_items`` per (provider, model) of ``pairs_from_rows``' columns plus
    provider and model; only where at least one item was answered in both windows."""
    out = {}
    for (provider, model), part in rows.group_by("provider", "model", maintain_order=True):
        test = paired_items(*pairs_from_rows(part))
        if test.pairs:
            out[(str(provider), str(model))] = test
    return out
