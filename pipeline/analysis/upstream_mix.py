"""Which upstreams served a routed model name, recent window against baseline.

OpenRouter routes one model name to several upstreams (``upstream_provider``, its chunk
``provider``), which may run other quantizations or serving stacks: traffic moving to other
upstreams is the plainest sign that another model answers under the same name.

Effect: the total variation distance between the two mixes (the share of calls that would
have to change upstream to turn one mix into the other); reported from
``MIN_MIX_SHIFT``.

Test: a permutation test over 24-hour blocks aligned to the split (exact over every choice
of the recent blocks, or ``_DRAWS`` seeded draws when there are more). It assumes the
blocks are exchangeable when nothing changed, not that calls are: a router may stick to
one upstream for hours, which a per-call G-test would read as a change. The price is
honesty about short histories: with D blocks of which r are recent, no p is below
1 / C(D, r) (1/4495 for 3 recent and 28 baseline days; 1/435 when only 2 recent days have
calls). A shift seen on 1-2 of the 3 recent days is what a router stuck on one upstream
for a day produces with nothing changed, so it rightly stays below significance. Finer
blocks would lift the floor but lose the level once stints outlast a block (6 h blocks: 28 %
rejections at 5 % with 4-hour stints; days 5 %); days themselves reach 17 % with stints of a
day on average (benchmarks/bench_upstream_mix_null.py).

The detail ends with the windows it compares, "(windows: the last 3 days against the 28
before)", because D and r count only days with calls: a reader (and the report) can then
say "on 1 of the last 3 days" from the row alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import combinations

import numpy as np
import polars as pl

from pipeline.analysis.warning_signs import BASELINE, RECENT

__all__ = ["COLUMN", "MIN_MIX_SHIFT", "UpstreamShift", "mix_testable", "upstream_shift"]

COLUMN = "upstream_provider"
MIN_MIX_SHIFT = 0.20  # total variation distance below which a mix change is not reported
MIN_CALLS = 5  # calls naming their upstream, per window
_BLOCK = timedelta(days=1)
_DRAWS = 20_000  # random choices of recent blocks when enumeration would be larger
_SHOWN = 3  # upstreams named per window; the rest are "others"


def _labelled(rows: pl.DataFrame) -> pl.DataFrame:
    if COLUMN not in rows.columns:
        return rows.clear().select("started_at").with_columns(pl.lit(None, pl.Utf8).alias(COLUMN))
    return rows.filter(pl.col(COLUMN).is_not_null()).select("started_at", COLUMN)


def mix_testable(rows: pl.DataFrame, split_at: datetime) -> bool:
    """Whether the mix test can run on ``rows``: ``MIN_CALLS`` calls naming an upstream on
    each side of ``split_at`` and two upstreams or more between them (one upstream
    throughout is no test). Providers that never send the field have none."""
    named = _labelled(rows)
    before = named.filter(pl.col("started_at") < split_at).height
    after = named.height - before
    return min(before, after) >= MIN_CALLS and named[COLUMN].n_unique() >= 2


@dataclass(frozen=True, slots=True)
class UpstreamShift:
    """The mix change of one provider: its words (no "; ", which separates a sign's
    parts), total variation distance and permutation p-value."""

    detail: str
    distance: float
    p_value: float


def _counts(rows: pl.DataFrame, split_at: datetime) -> tuple[np.ndarray, list[str], int]:
    """(blocks x upstreams count matrix, upstream names, number of recent blocks); only
    blocks with calls, recent ones first."""
    block = ((pl.col("started_at") - split_at) / _BLOCK).floor().cast(pl.Int64).alias("block")
    cells = rows.group_by(block, pl.col(COLUMN)).len()
    names = sorted(cells[COLUMN].unique().to_list())
    blocks = sorted(cells["block"].unique().to_list(), reverse=True)
    counts = np.zeros((len(blocks), len(names)))
    row, col = {b: i for i, b in enumerate(blocks)}, {n: i for i, n in enumerate(names)}
    for b, name, n in cells.iter_rows():
        counts[row[b], col[name]] = n
    return counts, names, sum(b >= 0 for b in blocks)


def _distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Total variation between the mixes in ``a`` and ``b`` along their last axis (one
    pair of count vectors, or one pair per row)."""
    share_a = a / a.sum(axis=-1, keepdims=True)
    share_b = b / b.sum(axis=-1, keepdims=True)
    return 0.5 * np.abs(share_a - share_b).sum(axis=-1)


def _permutation_p(counts: np.ndarray, recent: int) -> float:
    """Share of choices of ``recent`` blocks whose mix is at least as far from the rest
    as the observed one (the observed choice counts, so p > 0)."""
    total = counts.sum(axis=0)
    observed = float(_distance(counts[:recent].sum(axis=0), counts[recent:].sum(axis=0)))
    blocks = counts.shape[0]
    n_choices = math.comb(blocks, recent)
    if n_choices <= _DRAWS:
        choices: list[tuple[int, ...]] | np.ndarray = list(combinations(range(blocks), recent))
    else:
        rng = np.random.default_rng(0)  # seeded: the same data give the same p
        choices = np.array([rng.choice(blocks, recent, replace=False) for _ in range(_DRAWS)])
    picked = np.stack([counts[list(c)].sum(axis=0) for c in choices])
    rest = total - picked
    keep = (picked.sum(axis=1) > 0) & (rest.sum(axis=1) > 0)
    picked, rest = picked[keep], rest[keep]
    dist = _distance(picked, rest)
    at_least = int(np.sum(dist >= observed - 1e-12))
    if n_choices <= _DRAWS:
        return at_least / len(dist)
    return (at_least + 1) / (len(dist) + 1)


def _mix(counts: np.ndarray, names: list[str]) -> str:
    share = counts / counts.sum()
    order = sorted(range(len(names)), key=lambda i: (-share[i], names[i]))
    shown = [f"{names[i]} {share[i] * 100:.0f}\u00a0%" for i in order[:_SHOWN] if share[i] > 0]
    rest = float(sum(share[i] for i in order[_SHOWN:]))
    return ", ".join(shown + ([f"others {rest * 100:.0f}\u00a0%"] if rest > 0 else []))


def _days(span: timedelta) -> str:
    days = round(span / _BLOCK)
    return f"{days} day" if days == 1 else f"{days} days"


def upstream_shift(
    rows: pl.DataFrame,
    split_at: datetime,
    *,
    recent: timedelta = RECENT,
    baseline: timedelta = BASELINE,
) -> UpstreamShift | None:
    """The mix change of one provider's rows (columns started_at, upstream_provider), or
    None when it cannot be tested or moved less than ``MIN_MIX_SHIFT``; ``recent`` and
    ``baseline`` are the windows the rows were cut to, named in the detail."""
    if not mix_testable(rows, split_at):
        return None
    counts, names, n_recent = _counts(_labelled(rows), split_at)
    before, after = counts[n_recent:].sum(axis=0), counts[:n_recent].sum(axis=0)
    distance = float(_distance(after, before))
    if distance < MIN_MIX_SHIFT:
        return None
    days_before, days_after = counts.shape[0] - n_recent, n_recent
    detail = (
        f"served by {_mix(before, names)} ({int(before.sum()):,} calls on {days_before} days) -> "
        f"{_mix(after, names)} ({int(after.sum()):,} calls on the last {days_after} days), "
        f"{distance * 100:.0f}\u00a0% of calls moved (windows: the last {_days(recent)} "
        f"against the {round(baseline / _BLOCK)} before)"
    )
    return UpstreamShift(detail, distance, _permutation_p(counts, n_recent))
