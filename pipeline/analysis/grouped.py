"""Medians of many groups at once, equal to ``np.median`` of each group.

The analysis takes medians per hour of week and per day of hourly series; a mask and an
``np.median`` call per group cost a pass over the whole series each (168 or 365 passes per
series). One sort by (group, value) gives every group's middle values together.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["group_medians"]


def group_medians(
    values: NDArray[np.float64], keys: NDArray[np.integer], n_groups: int
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """(median, size) of ``values`` per key ``0 .. n_groups - 1``: NaN for an empty group
    and for a group holding a NaN, as ``np.median`` gives; the mean of the two middle values
    for an even size, computed as ``np.median`` does, so the results are identical."""
    v = np.asarray(values, dtype=np.float64)
    k = np.asarray(keys, dtype=np.int64)
    counts = np.bincount(k, minlength=n_groups).astype(np.int64)
    ordered = v[np.lexsort((v, k))]
    starts = np.cumsum(counts) - counts
    lo = starts + (counts - 1) // 2
    hi = starts + counts // 2
    med = np.full(n_groups, np.nan)
    has = counts > 0
    a, b = ordered[lo[has]], ordered[hi[has]]
    with np.errstate(invalid="ignore"):  # inf + -inf: NaN, as np.median gives
        med[has] = np.where(lo[has] == hi[has], a, (a + b) / 2)
    med[np.bincount(k[np.isnan(v)], minlength=n_groups) > 0] = np.nan
    return med, counts
