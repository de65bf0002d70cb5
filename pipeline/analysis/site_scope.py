"""Regional or provider-wide: is a degradation seen at one probe site, or at most of them?

Each site's own phases give an hourly flag, degraded or not, on one common hour grid.
An *episode* is a stretch where at least one site is in a degraded phase (gaps under
``EPISODE_GAP_H`` hours joined). A site *took part* when it was degraded for at least
half of the episode's hours it observed.

- one site took part, or at most half of the sites: **regional** (named by its sites);
- more than half took part and their degraded hours coincide more than chance allows:
  **provider-wide**;
- more than half took part but the coincidence could be chance: **undecided**.

The test: the statistic is the number of (hour, pair of taking-part sites) where both
sites are degraded, over the whole grid. Under the null, each site's degraded hours keep
their own durations and spacing but their timing is unrelated to the other sites'; so each
site's flag series is rotated by an independent, uniformly drawn offset (a circular-shift
permutation test, ``PERMUTATIONS`` draws, p = (1 + #{T* >= T}) / (1 + draws)).
What it assumes: a site's degradations are as likely at any hour of the window
(stationarity), and hours a site did not observe count as not degraded. Its power is
limited when a site is degraded for much of the window (any rotation overlaps) or when
the window is short; then it says undecided rather than provider-wide.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["ALPHA", "EPISODE_GAP_H", "PERMUTATIONS", "Episode", "episodes", "overlap_pvalue"]

EPISODE_GAP_H = 12
PERMUTATIONS = 999
ALPHA = 0.05
TEST_NAME = "circular-shift permutation of per-site degraded hours"

BoolGrid = NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Episode:
    """One degradation across sites: hour indices on the common grid (end exclusive)."""

    start: int
    end: int
    scope: str  # regional | provider-wide | undecided
    sites: tuple[str, ...]  # the sites that took part
    n_sites: int  # sites with data in the episode
    pvalue: float | None  # the overlap test (None when a single site took part)


def _runs(flag: BoolGrid, gap: int) -> list[tuple[int, int]]:
    """(start, end) of the runs of True, runs closer than ``gap`` hours joined."""
    runs: list[tuple[int, int]] = []
    edges = np.flatnonzero(np.diff(np.concatenate(([0], flag.astype(np.int8), [0]))))
    for start, end in zip(edges[::2], edges[1::2], strict=True):
        if runs and start - runs[-1][1] < gap:
            runs[-1] = (runs[-1][0], int(end))
        else:
            runs.append((int(start), int(end)))
    return runs


def _pair_overlap(flags: BoolGrid) -> int:
    """Sum over hours of (degraded sites choose 2): coinciding degraded site-pairs."""
    k = flags.sum(axis=0)
    return int((k * (k - 1) // 2).sum())


def overlap_pvalue(flags: BoolGrid, seed: int = 0, draws: int = PERMUTATIONS) -> float:
    """One-sided p of the coincidence of the rows' degraded hours (rows: sites)."""
    observed = _pair_overlap(flags)
    n = flags.shape[1]
    rng = np.random.default_rng(seed)
    exceed = 0
    for _ in range(draws):
        shifted = np.stack([np.roll(row, int(rng.integers(n))) for row in flags])
        exceed += _pair_overlap(shifted) >= observed
    return (1 + exceed) / (1 + draws)


def episodes(
    sites: list[str], degraded: BoolGrid, observed: BoolGrid, seed: int = 0
) -> list[Episode]:
    """Episodes of a provider's degradation across ``sites`` (rows of the two grids:
    degraded hour, hour with data) with their scope; needs two sites or more."""
    if len(sites) < 2:
        return []
    flags = degraded & observed
    out = []
    # a site's phase spans the hours its prober was down; the stretch does too
    for start, end in _runs(np.asarray(degraded.any(axis=0), dtype=bool), EPISODE_GAP_H):
        seen = observed[:, start:end].sum(axis=1)
        share = flags[:, start:end].sum(axis=1) / np.maximum(seen, 1)
        took_part = (share >= 0.5) & (seen > 0)
        with_data = int((seen > 0).sum())
        names = tuple(s for s, t in zip(sites, took_part, strict=True) if t)
        if not names:  # scattered degraded hours, no site degraded for half of them
            continue
        pvalue = overlap_pvalue(flags[took_part], seed) if len(names) > 1 else None
        if 2 * len(names) <= with_data:
            scope = "regional"
        elif pvalue is not None and pvalue < ALPHA:
            scope = "provider-wide"
        else:
            scope = "undecided"
        out.append(Episode(start, end, scope, names, with_data, pvalue))
    return out
